import Foundation
import GroveWire

/// Parses a JSON literal for comparisons: `#expect(state == json(#"{"count":1}"#))`.
func json(_ text: String) -> JSONValue {
    do {
        return try JSONValue(parsing: Data(text.utf8))
    } catch {
        fatalError("bad JSON literal in a test: \(text)")
    }
}

extension JSONValue {
    /// A member of an object: `state["step"]`.
    subscript(_ key: String) -> JSONValue? { objectValue?[key] }

    /// The elements of an array.
    var arrayValue: [JSONValue]? {
        if case .array(let elements) = self { return elements }
        return nil
    }

    /// The case name of an enum as Codable writes it: the single key of an object.
    var caseName: String? {
        guard let members = objectValue, members.count == 1 else { return stringValue }
        return members.keys.first
    }
}
