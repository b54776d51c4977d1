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
        nonisolated \(access)init(binary reader: inout \(Self.reader)) throws(\(Self.error)) {
        \(Self.trimmed(decodeBody))
        }
        nonisolated \(access)func encode(binary writer: inout \(Self.writer)) throws(\(Self.error)) {
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
            return Self.readFields(decoded) + decoded.enumerated().map { "\($1.access) = \(Self.value($1, $0))\n" }.joined()
        case .enumeration(let cases):
            var lines = "guard try reader.beginKeyed() == 1 else { throw reader.mismatch() }\nlet key = try reader.key()\n"
            for (index, item) in cases.enumerated() {
                lines += index == 0 ? "if " : "} else if "
                lines += "key.matches(\(Self.literal(item.key))) {\n"
                lines += Self.readFields(item.values.map(\.field))
                lines += "self = .\(item.name)"
                if !item.values.isEmpty {
                    let arguments = item.values.enumerated().map { index, value in
                        (value.label.map { "\($0): " } ?? "") + Self.value(value.field, index)
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
    /// to `Codable` for its exact error. Whether a field is optional is the type checker's call
    /// (`reader.required` has an overload for optionals), so `typealias Maybe = Int?` is one too.
    private static func readFields(_ fields: [CodableShape.Field]) -> String {
        var lines = ""
        for (index, field) in fields.enumerated() {
            lines += "var field\(index): \(field.type)? = nil\n"
            if field.optional { lines += "var seen\(index) = false\n" }
        }
        lines += "let entries = try reader.beginKeyed()\n"
        lines += fields.isEmpty ? "for _ in 0 ..< entries {\n_ = try reader.key()\n" : "for _ in 0 ..< entries {\nlet key = try reader.key()\n"
        for (index, field) in fields.enumerated() {
            lines += index == 0 ? "if " : "} else if "
            lines += "key.matches(\(literal(field.key))) {\n"
            if field.optional {
                lines += "guard !seen\(index) else { throw reader.mismatch() }\nseen\(index) = true\n"
                lines += "if try !reader.decodeNil() { field\(index) = try reader.decode(\(field.type).self) }\n"
            } else {
                lines += "guard field\(index) == nil else { throw reader.mismatch() }\n"
                lines += "field\(index) = try reader.decode(\(field.type).self)\n"
            }
        }
        lines += fields.isEmpty ? "try reader.skipValue()\n}\n" : "} else {\ntry reader.skipValue()\n}\n}\n"
        lines += "reader.endKeyed()\n"
        return lines
    }

    /// The value of a field read by ``readFields(_:)``.
    private static func value(_ field: CodableShape.Field, _ index: Int) -> String {
        field.optional ? "field\(index)" : "try reader.required(field\(index))"
    }

    /// Writes a keyed container of the fields; a nil optional is left out, as `encodeIfPresent`
    /// does. Fields not written as optionals ask `writer.isAbsent`, whose optional overload the
    /// type checker picks for an optional behind a typealias.
    private static func writeFields(_ fields: [CodableShape.Field]) -> String {
        if fields.isEmpty { return "writer.beginKeyed(count: 0)\n" }
        var lines = "var count = \(fields.count)\n"
        for field in fields {
            lines += field.optional ? "if \(field.access) == nil { count -= 1 }\n" : "if writer.isAbsent(\(field.access)) { count -= 1 }\n"
        }
        lines += "writer.beginKeyed(count: count)\n"
        for field in fields {
            if field.optional {
                lines += "if let present = \(field.access) {\nwriter.key(\(literal(field.key)))\ntry writer.encode(present)\n}\n"
            } else {
                lines += "if !writer.isAbsent(\(field.access)) {\nwriter.key(\(literal(field.key)))\ntry writer.encode(\(field.access))\n}\n"
            }
        }
        return lines
    }

    private static func trimmed(_ lines: String) -> Substring {
        lines.hasSuffix("\n") ? lines.dropLast() : lines[...]
    }

    private static func literal(_ key: String) -> String {
        // Raw identifiers (`my key`) may hold characters a string literal must escape.
        var escaped = ""
        for scalar in key.unicodeScalars {
            switch scalar {
            case "\\": escaped += "\\\\"
            case "\"": escaped += "\\\""
            case "\n": escaped += "\\n"
            case "\r": escaped += "\\r"
            case "\t": escaped += "\\t"
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return "\"" + escaped + "\""
    }
}
