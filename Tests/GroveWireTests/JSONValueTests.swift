import Foundation
import GroveWire
import Testing

private func parse(_ text: String) throws -> JSONValue { try JSONValue(parsing: Data(text.utf8)) }

@Suite("JSONValue", .timeLimit(.minutes(2)))
struct JSONValueTests {
    @Test func parsesEveryKindOfValue() throws {
        let value = try parse(#"{"a":null,"b":true,"c":false,"d":3,"e":-2.5,"f":"x","g":[1,"y",{}],"h":{"i":[]}}"#)
        #expect(value == .object([
            "a": .null, "b": .bool(true), "c": .bool(false), "d": .integer(3), "e": .number(-2.5), "f": .string("x"),
            "g": .array([.integer(1), .string("y"), .object([:])]), "h": .object(["i": .array([])]),
        ]))
    }

    @Test func scalarsAtTheTopLevel() throws {
        #expect(try parse("null") == .null)
        #expect(try parse("true") == .bool(true))
        #expect(try parse("17") == .integer(17))
        #expect(try parse("-2.5") == .number(-2.5))
        #expect(try parse(#""load""#) == .string("load"))
    }

    @Test func integersStayIntegers() throws {
        let text = #"[0,1,-1,17,1024,4503599627370496,-8999999999999999,1700000000000]"#
        let value = try parse(text)
        #expect(value == .array([0, 1, -1, 17, 1024, 4_503_599_627_370_496, -8_999_999_999_999_999, 1_700_000_000_000].map(JSONValue.integer)))
        #expect(value.description == text)
        #expect(JSONValue.integer(3).description == "3")
        #expect(JSONValue.object(["id": .integer(42)]).description == #"{"id":42}"#)
    }

    @Test func sixtyFourBitIntegersAreExact() throws {
        // Nanosecond timestamps and ids beyond 2^53, where a Double would round.
        for integer in [Int64(1 << 53) + 1, 1_732_312_800_123_456_789, .max, .min, -(Int64(1 << 53) + 1)] {
            let parsed = try parse(String(integer))
            #expect(parsed == .integer(integer))
            #expect(parsed.description == String(integer))
        }
    }

    @Test func integralDoublesAreWrittenAsIntegers() throws {
        // A `.number` holding a whole value is written without a fraction and reads back as an integer.
        #expect(JSONValue.number(3).description == "3")
        #expect(JSONValue.number(-0.0).description == "0")
        #expect(try parse(JSONValue.number(3).description) == .integer(3))
    }

    @Test func fractionsAndHugeNumbersStayNumbers() throws {
        #expect(JSONValue.number(2.5).description == "2.5")
        #expect(try parse("2.5") == .number(2.5))
        #expect(try parse(JSONValue.number(0.1).description) == .number(0.1))
        // Beyond Int64 the value is a double, written as one, and reads back equal.
        #expect(try parse("100000000000000000000") == .number(1e20))
        for huge in [1e20, -1e20, 1.5e300] {
            #expect(try parse(JSONValue.number(huge).description) == .number(huge), "\(huge)")
        }
    }

    @Test func booleansAndNumbersDoNotMix() throws {
        #expect(try parse("[true,1,0,false]") == .array([.bool(true), .integer(1), .integer(0), .bool(false)]))
        #expect(JSONValue.array([.bool(true), .integer(1)]).description == "[true,1]")
    }

    @Test func descriptionIsCompactSortedAndKeepsSlashes() throws {
        let value = JSONValue.object(["to": .string("poller/eu-1"), "b": .array([]), "a": .null])
        #expect(value.description == #"{"a":null,"b":[],"to":"poller/eu-1"}"#)
        #expect(String(decoding: value.jsonData, as: UTF8.self) == value.description)
    }

    @Test func nonFiniteNumbersBecomeNull() {
        #expect(JSONValue.number(.nan).description == "null")
        #expect(JSONValue.number(.infinity).description == "null")
    }

    @Test func rejectsText() {
        #expect(throws: DecodingError.self) { try parse("{") }
        #expect(throws: DecodingError.self) { try parse("") }
        #expect(throws: DecodingError.self) { try parse("nul") }
    }

    @Test func accessors() {
        #expect(JSONValue.object(["a": .null]).objectValue == ["a": .null])
        #expect(JSONValue.string("a").objectValue == nil)
        #expect(JSONValue.string("a").stringValue == "a")
        #expect(JSONValue.integer(1).stringValue == nil)
    }

    @Test func codableRoundTripThroughOtherTypes() throws {
        struct Envelope: Codable, Equatable { var effect: JSONValue; var request: JSONValue }
        let envelope = Envelope(effect: .integer(17), request: .object(["user": .string("ada"), "tries": .integer(2), "score": .number(0.5)]))
        let encoded = try WireJSON.encode(envelope)
        #expect(String(decoding: encoded, as: UTF8.self) == #"{"effect":17,"request":{"score":0.5,"tries":2,"user":"ada"}}"#)
        #expect(try WireJSON.decode(Envelope.self, from: encoded) == envelope)
    }

    @Test func randomValuesRoundTrip() throws {
        var random = SeededGenerator(seed: 2024)
        for _ in 0..<500 {
            let value = Self.randomValue(depth: 0, using: &random)
            let text = value.description
            let parsed = try JSONValue(parsing: value.jsonData)
            #expect(parsed == value, "\(text)")
            // Writing the parsed value again gives the same text: nothing drifts (1 → 1.0, order).
            #expect(parsed.description == text)
        }
    }

    static func randomValue(depth: Int, using random: inout SeededGenerator) -> JSONValue {
        let pick = depth > 3 ? Int.random(in: 0..<5, using: &random) : Int.random(in: 0..<7, using: &random)
        switch pick {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &random))
        case 2: return .integer(Int64.random(in: .min ... .max, using: &random) >> Int64.random(in: 0..<63, using: &random))
        case 3:
            // Parsing gives `.integer` for whole values, so draw fractional doubles here.
            let fraction = Double.random(in: -1e9...1e9, using: &random)
            return .number(fraction.rounded() == fraction ? fraction + 0.5 : fraction)
        case 4: return .string(randomString(using: &random))
        case 5: return .array((0..<Int.random(in: 0...4, using: &random)).map { _ in randomValue(depth: depth + 1, using: &random) })
        default:
            var members: [String: JSONValue] = [:]
            for _ in 0..<Int.random(in: 0...4, using: &random) {
                members[randomString(using: &random)] = randomValue(depth: depth + 1, using: &random)
            }
            return .object(members)
        }
    }

    static func randomString(using random: inout SeededGenerator) -> String {
        let alphabet = Array("az AZ09\"\\/\n\t\u{0001}é漢🌳")
        return String((0..<Int.random(in: 0...8, using: &random)).map { _ in alphabet.randomElement(using: &random)! })
    }
}
