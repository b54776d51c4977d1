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

@Suite("@BinaryCodable expansion", .timeLimit(.minutes(2)))
struct BinaryCodableMacroTests {
    @Test("a struct: every stored property read into a local, nil optionals left out, a let with a value only written (its type not needed); optionality is the type checker's (reader.required, writer.isAbsent)")
    func structExpansion() {
        expect(
            """
            @BinaryCodable
            public struct Point: Codable {
                var x: Int
                var label: String?
                let version = 1
                var doubled: Int { x * 2 }
            }
            """,
            expands: """
            public struct Point: Codable {
                var x: Int
                var label: String?
                let version = 1
                var doubled: Int { x * 2 }
            }

            extension Point: GroveWire.BinaryCodable {
                nonisolated public init(binary reader: inout GroveWire.BinaryCodableReader) throws(GroveWire.BinaryCodingError) {
                    var field0: Int? = nil
                    var field1: String? = nil
                    var seen1 = false
                    let entries = try reader.beginKeyed()
                    for _ in 0 ..< entries {
                        let key = try reader.key()
                        if key.matches("x") {
                            guard field0 == nil else {
                                throw reader.mismatch()
                            }
                            field0 = try reader.decode(Int.self)
                        } else if key.matches("label") {
                            guard !seen1 else {
                                throw reader.mismatch()
                            }
                            seen1 = true
                            if try !reader.decodeNil() {
                                field1 = try reader.decode(String.self)
                            }
                        } else {
                            try reader.skipValue()
                        }
                    }
                    reader.endKeyed()
                    self.x = try reader.required(field0)
                    self.label = field1
                }
                nonisolated public func encode(binary writer: inout GroveWire.BinaryCodableWriter) throws(GroveWire.BinaryCodingError) {
                    var count = 3
                    if writer.isAbsent(self.x) {
                        count -= 1
                    }
                    if self.label == nil {
                        count -= 1
                    }
                    if writer.isAbsent(self.version) {
                        count -= 1
                    }
                    writer.beginKeyed(count: count)
                    if !writer.isAbsent(self.x) {
                        writer.key("x")
                        try writer.encode(self.x)
                    }
                    if let present = self.label {
                        writer.key("label")
                        try writer.encode(present)
                    }
                    if !writer.isAbsent(self.version) {
                        writer.key("version")
                        try writer.encode(self.version)
                    }
                }
            }
            """)
    }

    @Test("a type declared in a public extension gets public members")
    func publicByItsExtension() {
        expect(
            """
            public extension Shop {
                @BinaryCodable
                struct Item: Codable {
                }
            }
            """,
            expands: """
            public extension Shop {
                struct Item: Codable {
                }
            }

            extension Shop.Item: GroveWire.BinaryCodable {
                nonisolated public init(binary reader: inout GroveWire.BinaryCodableReader) throws(GroveWire.BinaryCodingError) {
                    let entries = try reader.beginKeyed()
                    for _ in 0 ..< entries {
                        _ = try reader.key()
                        try reader.skipValue()
                    }
                    reader.endKeyed()
                }
                nonisolated public func encode(binary writer: inout GroveWire.BinaryCodableWriter) throws(GroveWire.BinaryCodingError) {
                    writer.beginKeyed(count: 0)
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
        ("@BinaryCodable\nstruct Box: Codable {\n    var a: Int\n    #if DEBUG\n    var b: Int = 0\n    #endif\n}",
         "@BinaryCodable cannot see which #if branch is compiled; move the members out of #if or drop the macro", 4, 5),
        ("@BinaryCodable\nstruct UserID: Codable, RawRepresentable {\n    var rawValue: String\n}",
         "@BinaryCodable does not support RawRepresentable types (Codable codes them as their raw value); drop the macro", 2, 25),
        ("@BinaryCodable\nstruct Tag: Codable {\n    var rawValue: String\n}",
         "@BinaryCodable does not support RawRepresentable types (Codable codes them as their raw value); drop the macro", 3, 5),
        ("@BinaryCodable\nenum Color: Code, Codable {\n    case red = \"r\"\n}",
         "@BinaryCodable cannot tell this enum's raw type; write it first among the inherited types as one of the standard library's (String, Int, …) or drop the macro", 3, 10),
        ("@BinaryCodable\nstruct Box: Codable {\n    var a = \"s\", b: Int\n}",
         "@BinaryCodable needs the type of 'a' written out, e.g. 'var count: Int = 0'", 3, 9),
    ])
    func refusals(source: String, message: String, line: Int, column: Int) {
        // A refused declaration is left as it was, without an extension.
        expect(source, expands: source.replacingOccurrences(of: "@BinaryCodable\n", with: ""),
               diagnostics: [DiagnosticSpec(message: message, line: line, column: column)])
    }
}
