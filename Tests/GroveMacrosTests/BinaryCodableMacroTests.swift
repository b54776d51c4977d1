import Foundation
import GroveMacros
import SwiftSyntaxMacroExpansion
import SwiftSyntaxMacrosGenericTestSupport
import Testing

private let macros: [String: MacroSpec] = ["BinaryCodable": MacroSpec(type: BinaryCodableMacro.self, conformances: ["BinaryCodable"])]

/// Expands `source` and checks the result (the generated code's behaviour is tested in
/// GroveWireTests, against the synthesized Codable conformance).
private func expect(
    _ source: String, expands expanded: String, diagnostics: [DiagnosticSpec] = [],
    sourceLocation: SourceLocation = #_sourceLocation
) {
    assertMacroExpansion(source, expandedSource: expanded, diagnostics: diagnostics, macroSpecs: macros, indentationWidth: .spaces(4)) { failure in
        Issue.record(Comment(rawValue: failure.message), sourceLocation: sourceLocation)
    }
}

@Suite("@BinaryCodable expansion")
struct BinaryCodableMacroTests {
    @Test("a struct: every stored property read into a local, optionals left out when nil, a let with a value only written")
    func structExpansion() {
        expect(
            """
            @BinaryCodable
            public struct Point: Codable {
                var x: Int
                var label: String?
                let version: Int = 1
                var doubled: Int { x * 2 }
            }
            """,
            expands: """
            public struct Point: Codable {
                var x: Int
                var label: String?
                let version: Int = 1
                var doubled: Int { x * 2 }
            }

            extension Point: GroveWire.BinaryCodable {
                public init(binary reader: inout GroveWire.BinaryCodableReader) throws(GroveWire.BinaryCodingError) {
                    var field_x: Int? = nil
                    var field_label: String? = nil
                    var seen1 = false
                    let entries = try reader.beginKeyed()
                    for _ in 0 ..< entries {
                        let key = try reader.key()
                        if key.matches("x") {
                            guard field_x == nil else {
                                throw reader.mismatch()
                            }
                            field_x = try reader.decode(Int.self)
                        } else if key.matches("label") {
                            guard !seen1 else {
                                throw reader.mismatch()
                            }
                            seen1 = true
                            if try !reader.decodeNil() {
                                field_label = try reader.decode(String.self)
                            }
                        } else {
                            try reader.skipValue()
                        }
                    }
                    reader.endKeyed()
                    guard let field_x else {
                        throw reader.mismatch()
                    }
                    self.x = field_x
                    self.label = field_label
                }
                public func encode(binary writer: inout GroveWire.BinaryCodableWriter) throws(GroveWire.BinaryCodingError) {
                    var count = 3
                    if self.label == nil {
                        count -= 1
                    }
                    writer.beginKeyed(count: count)
                    writer.key("x")
                    try writer.encode(self.x)
                    if let present = self.label {
                        writer.key("label")
                        try writer.encode(present)
                    }
                    writer.key("version")
                    try writer.encode(self.version)
                }
            }
            """)
    }

    @Test("declarations whose bytes are not the synthesized ones are refused, saying why and where", arguments: [
        ("@BinaryCodable\nclass Box: Codable {}", "@BinaryCodable applies to structs and enums", 1, 1),
        ("@BinaryCodable\nstruct Box<T: Codable>: Codable {\n    var value: T\n}",
         "@BinaryCodable does not support generic types; their fields are coded through Codable", 2, 11),
        ("@BinaryCodable\nstruct Box: Codable {\n    var count = 0\n}",
         "@BinaryCodable needs the type of 'count' written out, e.g. 'var count: Int = 0'", 3, 9),
        ("@BinaryCodable\nstruct Box: Codable {\n    var a: Int\n    enum CodingKeys: String, CodingKey {\n        case a = \"A\"\n    }\n}",
         "@BinaryCodable generates the synthesized coding; remove CodingKeys or the macro", 4, 5),
        ("@BinaryCodable\nenum Event: Codable {\n    case a\n    init(from decoder: any Decoder) throws { self = .a }\n}",
         "@BinaryCodable generates the synthesized coding; remove init(from:) or the macro", 4, 5),
        ("@BinaryCodable\nstruct Box: Codable {\n    lazy var a: Int = 1\n}", "@BinaryCodable does not support lazy properties", 3, 5),
        ("@BinaryCodable\nstruct Box: Codable {\n    @Clamped var a: Int\n}",
         "@BinaryCodable does not support property wrappers or attributes on stored properties", 3, 5),
    ])
    func refusals(source: String, message: String, line: Int, column: Int) {
        // A refused declaration is left as it was, without an extension.
        expect(source, expands: source.replacingOccurrences(of: "@BinaryCodable\n", with: ""),
               diagnostics: [DiagnosticSpec(message: message, line: line, column: column)])
    }
}
