import GroveWire

/// A location in a JSON document, written the JSONPath way: `$`, `.key`, `["odd key"]`, `[2]`.
package struct JSONPath: Hashable, Sendable, CustomStringConvertible {
    package enum Component: Hashable, Sendable {
        case key(String)
        case index(Int)
    }

    package private(set) var components: [Component] = []

    /// The document itself.
    package static let root = JSONPath()

    /// The member `key` of the object here.
    package func appending(_ key: String) -> JSONPath {
        var path = self
        path.components.append(.key(key))
        return path
    }

    /// The element at `index` of the array here.
    package func appending(index: Int) -> JSONPath {
        var path = self
        path.components.append(.index(index))
        return path
    }

    package var description: String {
        var text = "$"
        for component in components {
            switch component {
            case .key(let key) where JSONPath.isPlainKey(key): text += "." + key
            case .key(let key): text += "[" + JSONValue.string(key).description + "]"
            case .index(let index): text += "[\(index)]"
            }
        }
        return text
    }

    /// Keys written with a dot: an ASCII letter or `_`, then letters, digits or `_`.
    private static func isPlainKey(_ key: String) -> Bool {
        guard let first = key.utf8.first, isLetter(first) || first == UInt8(ascii: "_") else { return false }
        return key.utf8.allSatisfy { isLetter($0) || $0 == UInt8(ascii: "_") || (0x30...0x39).contains($0) }
    }

    private static func isLetter(_ byte: UInt8) -> Bool {
        (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
    }
}
