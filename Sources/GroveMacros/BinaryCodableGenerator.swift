/// The source of `init(binary:)` and `encode(binary:)` for a ``CodableShape``: the bytes the
/// synthesized `Codable` conformance produces through GroveWire's `BinaryCodec`.
struct BinaryCodableGenerator {
    let shape: CodableShape
    /// `public ` or `package ` when the type is, else empty.
    let access: String

    static let reader = "GroveWire.BinaryCodableReader"
    static let writer = "GroveWire.BinaryCodableWriter"
    static let error = "GroveWire.BinaryCodingError"

    var members: String {
        """
        \(access)init(binary reader: inout \(Self.reader)) throws(\(Self.error)) {
        \(Self.trimmed(decodeBody))
        }
        \(access)func encode(binary writer: inout \(Self.writer)) throws(\(Self.error)) {
        \(Self.trimmed(encodeBody))
        }
        """
    }

    private var decodeBody: String {
        switch shape {
        case .rawValue(let type):
            return """
            let raw = try reader.decode(\(type).self)
            guard let value = Self(rawValue: raw) else { throw reader.mismatch() }
            self = value
            """
        case .structure(let fields):
            let decoded = fields.filter { !$0.encodeOnly }
            return Self.readFields(decoded) + decoded.map { "\($0.access) = \(Self.local($0))\n" }.joined()
        case .enumeration(let cases):
            var lines = "guard try reader.beginKeyed() == 1 else { throw reader.mismatch() }\nlet key = try reader.key()\n"
            for (index, item) in cases.enumerated() {
                lines += index == 0 ? "if " : "} else if "
                lines += "key.matches(\(Self.literal(item.key))) {\n"
                lines += Self.readFields(item.values.map(\.field))
                lines += "self = .\(item.name)"
                if !item.values.isEmpty {
                    let arguments = item.values.map { value in
                        (value.label.map { "\($0): " } ?? "") + Self.local(value.field)
                    }
                    lines += "(" + arguments.joined(separator: ", ") + ")"
                }
                lines += "\n"
            }
            lines += cases.isEmpty ? "throw reader.mismatch()\n" : "} else {\nthrow reader.mismatch()\n}\n"
            return lines + "reader.endKeyed()"
        }
    }

    private var encodeBody: String {
        switch shape {
        case .rawValue:
            return "try writer.encode(self.rawValue)"
        case .structure(let fields):
            return Self.writeFields(fields)
        case .enumeration(let cases):
            var lines = "writer.beginKeyed(count: 1)\nswitch self {\n"
            for item in cases {
                lines += "case .\(item.name)"
                if !item.values.isEmpty {
                    lines += "(" + item.values.map { "let \($0.field.access)" }.joined(separator: ", ") + ")"
                }
                lines += ":\nwriter.key(\(Self.literal(item.key)))\n" + Self.writeFields(item.values.map(\.field))
            }
            return lines + "}"
        }
    }

    /// Reads a keyed container into one local per field: unknown keys are skipped, as
    /// `Codable` does; a repeated or missing required key throws, so `BinaryCodec` falls back
    /// to `Codable` for its exact error.
    private static func readFields(_ fields: [CodableShape.Field]) -> String {
        var lines = ""
        for (index, field) in fields.enumerated() {
            lines += "var \(local(field)): \(field.type)? = nil\n"
            if field.optional { lines += "var seen\(index) = false\n" }
        }
        lines += "let entries = try reader.beginKeyed()\n"
        lines += fields.isEmpty ? "for _ in 0 ..< entries {\n_ = try reader.key()\n" : "for _ in 0 ..< entries {\nlet key = try reader.key()\n"
        for (index, field) in fields.enumerated() {
            lines += index == 0 ? "if " : "} else if "
            lines += "key.matches(\(literal(field.key))) {\n"
            if field.optional {
                lines += "guard !seen\(index) else { throw reader.mismatch() }\nseen\(index) = true\n"
                lines += "if try !reader.decodeNil() { \(local(field)) = try reader.decode(\(field.type).self) }\n"
            } else {
                lines += "guard \(local(field)) == nil else { throw reader.mismatch() }\n"
                lines += "\(local(field)) = try reader.decode(\(field.type).self)\n"
            }
        }
        lines += fields.isEmpty ? "try reader.skipValue()\n}\n" : "} else {\ntry reader.skipValue()\n}\n}\n"
        lines += "reader.endKeyed()\n"
        for field in fields where !field.optional {
            lines += "guard let \(local(field)) else { throw reader.mismatch() }\n"
        }
        return lines
    }

    /// Writes a keyed container of the fields; a nil optional is left out, as `encodeIfPresent` does.
    private static func writeFields(_ fields: [CodableShape.Field]) -> String {
        let optionals = fields.filter(\.optional)
        var lines: String
        if optionals.isEmpty {
            lines = "writer.beginKeyed(count: \(fields.count))\n"
        } else {
            lines = "var count = \(fields.count)\n"
            for field in optionals { lines += "if \(field.access) == nil { count -= 1 }\n" }
            lines += "writer.beginKeyed(count: count)\n"
        }
        for field in fields {
            if field.optional {
                lines += "if let present = \(field.access) {\nwriter.key(\(literal(field.key)))\ntry writer.encode(present)\n}\n"
            } else {
                lines += "writer.key(\(literal(field.key)))\ntry writer.encode(\(field.access))\n"
            }
        }
        return lines
    }

    private static func trimmed(_ lines: String) -> Substring {
        lines.hasSuffix("\n") ? lines.dropLast() : lines[...]
    }

    /// The local a field is read into (keys are identifiers, unique in their container).
    private static func local(_ field: CodableShape.Field) -> String {
        "field_" + field.key
    }

    /// A key as a string literal (an identifier: no quotes or backslashes to escape).
    private static func literal(_ key: String) -> String {
        "\"" + key + "\""
    }
}
