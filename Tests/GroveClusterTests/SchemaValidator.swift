import Foundation
import GroveWire

/// The part of JSON Schema 2020-12 that `docs/topology.schema.json` uses, enough to give the
/// schema's verdict on a document, so that a test can hold the decoder to it.
///
/// A keyword it does not know is reported by ``unknownKeywords()`` rather than skipped: a rule
/// added to the schema must be understood here before the schema can claim it.
struct SchemaValidator {
    /// One reason the schema refuses a document, at a JSON path in the decoder's spelling
    /// (`$.machines[2].worker`). A failed condition (`if`/`then`, `not`, `anyOf`, `contains`) is
    /// placed at the object it belongs to, as the decoder may name either of the keys involved.
    struct Failure: CustomStringConvertible {
        var path: String
        var message: String
        var description: String { "\(path): \(message)" }
    }

    static let annotations: Set = ["$schema", "$defs", "title", "description", "default", "examples"]
    static let keywords: Set = [
        "type", "enum", "const", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minLength", "maxLength", "pattern",
        "items", "minItems", "maxItems", "uniqueItems", "contains", "required", "properties", "additionalProperties", "$ref",
        "not", "allOf", "anyOf", "if", "then",
    ]

    let root: [String: JSONValue]

    /// Every way `document` breaks the schema; empty when it is valid.
    func failures(of document: JSONValue) -> [Failure] {
        var failures: [Failure] = []
        check(document, against: .object(root), at: "$", into: &failures)
        return failures
    }

    /// Keywords the schema uses that this validator does not apply, with where they are.
    func unknownKeywords() -> [String] {
        var unknown: [String] = []
        func walk(_ node: JSONValue, at place: String, isSchema: Bool) {
            guard case .object(let members) = node else { return }
            for (key, value) in members.sorted(by: { $0.key < $1.key }) {
                if isSchema, !Self.keywords.contains(key), !Self.annotations.contains(key) { unknown.append("\(place)/\(key)") }
                switch key {
                case "properties", "$defs":
                    if case .object(let children) = value {
                        for (name, child) in children { walk(child, at: "\(place)/\(key)/\(name)", isSchema: true) }
                    }
                case "allOf", "anyOf":
                    if case .array(let children) = value {
                        for (index, child) in children.enumerated() { walk(child, at: "\(place)/\(key)/\(index)", isSchema: true) }
                    }
                case "items", "contains", "not", "if", "then", "additionalProperties":
                    walk(value, at: "\(place)/\(key)", isSchema: true)
                default:
                    break
                }
            }
        }
        walk(.object(root), at: "#", isSchema: true)
        return unknown
    }

    /// `schema` with its `$ref` (to `#/$defs/<name>`) merged in; its own keywords win.
    func resolved(_ schema: JSONValue) -> [String: JSONValue] {
        guard case .object(var members) = schema else { return [:] }
        if case .string(let reference)? = members["$ref"], reference.hasPrefix("#/$defs/"),
           case .object(let defs)? = root["$defs"], case .object(let target)? = defs[String(reference.dropFirst("#/$defs/".count))] {
            members["$ref"] = nil
            members = resolved(.object(target)).merging(members) { _, own in own }
        }
        return members
    }

    private func check(_ value: JSONValue, against schemaValue: JSONValue, at path: String, into failures: inout [Failure]) {
        let schema = resolved(schemaValue)
        func fail(_ message: String, at place: String = path) { failures.append(Failure(path: place, message: message)) }

        if case .array(let types)? = schema["type"] {
            if !types.contains(where: { Self.has(value, type: $0.stringValue ?? "") }) { fail("not of type \(types)") }
        } else if case .string(let type)? = schema["type"], !Self.has(value, type: type) {
            fail("expected \(type), found \(value)")
            return
        }
        if case .array(let choices)? = schema["enum"], !choices.contains(value) { fail("\(value) is not one of \(choices)") }
        if let constant = schema["const"], constant != value { fail("\(value) is not \(constant)") }
        if let number = Self.number(value) {
            if let bound = schema["minimum"].flatMap(Self.number), number < bound { fail("\(value) is below the minimum \(bound)") }
            if let bound = schema["maximum"].flatMap(Self.number), number > bound { fail("\(value) is above the maximum \(bound)") }
            if let bound = schema["exclusiveMinimum"].flatMap(Self.number), number <= bound { fail("\(value) is not above \(bound)") }
            if let bound = schema["exclusiveMaximum"].flatMap(Self.number), number >= bound { fail("\(value) is not below \(bound)") }
        }
        if case .string(let text) = value {
            let length = text.unicodeScalars.count
            if let bound = schema["minLength"].flatMap(Self.number), Double(length) < bound { fail("shorter than \(bound)") }
            if let bound = schema["maxLength"].flatMap(Self.number), Double(length) > bound { fail("longer than \(bound)") }
            if case .string(let pattern)? = schema["pattern"] {
                let expression = try? NSRegularExpression(pattern: pattern)
                if expression?.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) == nil {
                    fail("\(value) does not match \(pattern)")
                }
            }
        }
        if case .array(let elements) = value {
            if let bound = schema["minItems"].flatMap(Self.number), Double(elements.count) < bound { fail("fewer than \(bound) items") }
            if let bound = schema["maxItems"].flatMap(Self.number), Double(elements.count) > bound { fail("more than \(bound) items") }
            if schema["uniqueItems"] == .bool(true), Set(elements).count != elements.count { fail("items are not unique") }
            if let items = schema["items"] {
                for (index, element) in elements.enumerated() { check(element, against: items, at: "\(path)[\(index)]", into: &failures) }
            }
            if let contains = schema["contains"], !elements.contains(where: { isValid($0, contains, path) }) {
                fail("no item matches \(contains)")
            }
        }
        if case .object(let members) = value {
            if case .array(let required)? = schema["required"] {
                for case .string(let key) in required where members[key] == nil { fail("missing required key \(key)", at: Self.path(path, key)) }
            }
            let properties: [String: JSONValue] = if case .object(let properties)? = schema["properties"] { properties } else { [:] }
            for (key, member) in members.sorted(by: { $0.key < $1.key }) {
                if let property = properties[key] {
                    check(member, against: property, at: Self.path(path, key), into: &failures)
                } else if schema["additionalProperties"] == .bool(false) {
                    fail("unknown key \(key)", at: Self.path(path, key))
                }
            }
        }
        if let negated = schema["not"], isValid(value, negated, path) { fail("matches what `not` forbids: \(negated)") }
        if case .array(let options)? = schema["anyOf"], !options.contains(where: { isValid(value, $0, path) }) { fail("matches none of anyOf") }
        if case .array(let parts)? = schema["allOf"] {
            for part in parts {
                var inner: [Failure] = []
                check(value, against: part, at: path, into: &inner)
                if !inner.isEmpty { fail("breaks a rule of allOf: \(inner.map(\.description).joined(separator: "; "))") }
            }
        }
        if let condition = schema["if"], isValid(value, condition, path), let consequence = schema["then"] {
            var inner: [Failure] = []
            check(value, against: consequence, at: path, into: &inner)
            if !inner.isEmpty { fail("if \(condition) then \(consequence), broken: \(inner.map(\.description).joined(separator: "; "))") }
        }
    }

    private func isValid(_ value: JSONValue, _ schema: JSONValue, _ path: String) -> Bool {
        var inner: [Failure] = []
        check(value, against: schema, at: path, into: &inner)
        return inner.isEmpty
    }

    static func path(_ parent: String, _ key: String) -> String {
        key.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" } ? "\(parent).\(key)" : "\(parent)[\(JSONValue.string(key))]"
    }

    static func number(_ value: JSONValue) -> Double? {
        switch value {
        case .integer(let number): Double(number)
        case .number(let number): number
        case .null, .bool, .string, .array, .object: nil
        }
    }

    static func has(_ value: JSONValue, type: String) -> Bool {
        switch value {
        case .null: type == "null"
        case .bool: type == "boolean"
        case .string: type == "string"
        case .array: type == "array"
        case .object: type == "object"
        case .integer: type == "integer" || type == "number"
        case .number(let number): type == "number" || (type == "integer" && number.rounded() == number)
        }
    }
}
