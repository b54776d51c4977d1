import Foundation
import GroveWire
import Testing

private struct IntField: Codable, Equatable { var i: Int }
private struct DoubleField: Codable, Equatable { var d: Double }
private struct FloatField: Codable, Equatable { var f: Float }
private struct SmallField: Codable, Equatable { var u: UInt8 }
private struct TextField: Codable, Equatable { var s: String }
private struct Mixed: Codable, Equatable {
    var list: [Int]
    var names: [String: Bool]
    var byID: [Int: String]
    var maybe: Double?
    var when: Date
}

/// `WireJSON.decodeQuickly` against `JSONDecoder`: whenever the fast path returns a value, it is
/// the value `JSONDecoder` returns; for strict JSON of ordinary types it does return one.
@Suite("WireJSON.decodeQuickly", .timeLimit(.minutes(2)))
struct JSONTranscoderTests {
    static let seeds: [UInt64] = Array(1 ... 8)

    /// Decodes with both and checks they agree; returns whether the fast path answered. Not
    /// discardable: a fast path that gives up compares nothing, so each caller says what it
    /// expects of the answer (given, counted, or left to JSONDecoder).
    private func agree<T: Decodable & Equatable>(_ type: T.Type, _ json: String, sourceLocation: SourceLocation = #_sourceLocation) -> Bool {
        let quick = WireJSON.decodeQuickly(T.self, from: Array(json.utf8))
        let foundation = try? JSONDecoder().decode(T.self, from: Data(json.utf8))
        if let quick {
            #expect(quick == foundation, "\(json): fast path \(quick), JSONDecoder \(String(describing: foundation))", sourceLocation: sourceLocation)
        }
        return quick != nil
    }

    /// As ``agree(_:_:sourceLocation:)`` for strict JSON: whenever `JSONDecoder` decodes it, the
    /// fast path must answer too (and agree), so a fast path that gives up fails here.
    private func answersLikeJSONDecoder<T: Decodable & Equatable>(_ type: T.Type, _ json: String,
                                                                  sourceLocation: SourceLocation = #_sourceLocation) {
        let answered = agree(T.self, json, sourceLocation: sourceLocation)
        if (try? JSONDecoder().decode(T.self, from: Data(json.utf8))) != nil {
            #expect(answered, "\(json): JSONDecoder decodes it, the fast path gave up", sourceLocation: sourceLocation)
        }
    }

    @Test(arguments: seeds) func randomEventsAndStatesDecodeLikeJSONDecoder(seed: UInt64) throws {
        var source = BinaryValueSource(seed: seed)
        var compared = 0
        for _ in 0 ..< 200 {
            let event = source.event()
            if let json = try? JSONEncoder().encode(event) { // not for infinities
                #expect(agree(BinaryFixtureEvent.self, String(decoding: json, as: UTF8.self)), "seed \(seed): \(event)")
                compared += 1
            }
            let state = source.state()
            if let json = try? JSONEncoder().encode(state) {
                #expect(agree(BinaryFixtureState.self, String(decoding: json, as: UTF8.self)), "seed \(seed): \(state)")
                compared += 1
            }
        }
        // 361 to 379 of 400 for these seeds: a JSONEncoder that refused them would compare none.
        #expect(compared >= 340, "seed \(seed): \(compared) of 400 values compared")
    }

    @Test(arguments: seeds) func randomTreesNeverDisagreeWithJSONDecoder(seed: UInt64) throws {
        var source = BinaryValueSource(seed: seed)
        var answered = 0
        var answeredSpaced = 0
        for _ in 0 ..< 100 {
            let tree = source.tree(depth: 4)
            guard let json = try? JSONEncoder().encode(tree) else { continue } // infinities
            if agree(BinaryTree.self, String(decoding: json, as: UTF8.self)) { answered += 1 }
            let pretty = JSONEncoder()
            pretty.outputFormatting = [.prettyPrinted]
            let spaced = try pretty.encode(tree)
            if agree(BinaryTree.self, String(decoding: spaced, as: UTF8.self)) { answeredSpaced += 1 }
        }
        // Trees holding Int128 beyond 64 bits are left to JSONDecoder; most others are answered,
        // with whitespace between the tokens as without.
        #expect(answered > 30, "seed \(seed): the fast path answered \(answered) of 100")
        #expect(answeredSpaced == answered, "seed \(seed): \(answeredSpaced) answered pretty-printed, \(answered) compact")
    }

    @Test func numbersFollowJSONDecoder() {
        for json in [#"{"i":1}"#, #"{"i":-1}"#, #"{"i":1.0}"#, #"{"i":1e2}"#, #"{"i":9223372036854775807}"#,
                     #"{"i":-9223372036854775808}"#, #"{"i":1.5}"#, #"{"i":9223372036854775808}"#, #"{"i":1E+2}"#] {
            answersLikeJSONDecoder(IntField.self, json)
        }
        // -0 as an Int, like the underflows below, is left to JSONDecoder.
        #expect(!agree(IntField.self, #"{"i":-0}"#))
        #expect(agree(IntField.self, #"{"i":1.0}"#))
        #expect(agree(IntField.self, #"{"i":-9223372036854775808}"#))
        for json in [#"{"d":1}"#, #"{"d":-0.0}"#, #"{"d":-0}"#, #"{"d":0.1}"#, #"{"d":1e-300}"#, #"{"d":123456789012345678901234567890}"#,
                     #"{"d":9007199254740993}"#, #"{"d":18446744073709551615}"#, #"{"d":2.5e10}"#] {
            #expect(agree(DoubleField.self, json), "\(json)")
        }
        #expect(WireJSON.decodeQuickly(DoubleField.self, from: Array(#"{"d":-0}"#.utf8))?.d.sign == .minus)
        for json in [#"{"f":0.1}"#, #"{"f":1e39}"#, #"{"f":3}"#, #"{"f":1e-50}"#, #"{"f":1e-40}"#, #"{"f":3.5e38}"#] { answersLikeJSONDecoder(FloatField.self, json) }
        // Too small for a Double: JSONDecoder refuses it as Double and reads 0 as Int.
        for json in [#"{"d":1e-400}"#, #"{"d":0e-400}"#, #"{"d":4.9e-324}"#, #"{"d":1.7976931348623159e308}"#] { answersLikeJSONDecoder(DoubleField.self, json) }
        #expect(!agree(IntField.self, #"{"i":1e-400}"#))
        for json in [#"{"i":0.0e5}"#, #"{"i":1.0000000000000002}"#] { answersLikeJSONDecoder(IntField.self, json) }
        for json in [#"{"u":255}"#, #"{"u":300}"#, #"{"u":-1}"#] { answersLikeJSONDecoder(SmallField.self, json) }
    }

    @Test(arguments: seeds) func randomNumbersDecodeLikeJSONDecoder(seed: UInt64) {
        var random = SeededGenerator(seed: seed)
        func digits(_ count: Int) -> String {
            String((0 ..< count).map { _ in "0123456789".randomElement(using: &random)! })
        }
        var decodable = 0
        var answered = 0
        func count<T: Decodable & Equatable>(_ type: T.Type, _ json: String) {
            if agree(T.self, json) { answered += 1 }
            if (try? JSONDecoder().decode(T.self, from: Data(json.utf8))) != nil { decodable += 1 }
        }
        for _ in 0 ..< 300 {
            var number = Bool.random(using: &random) ? "-" : ""
            let whole = digits(Int.random(in: 1 ... 22, using: &random))
            number += whole.count > 1 && whole.first == "0" ? "1" + whole.dropFirst() : whole
            if Bool.random(using: &random) { number += "." + digits(Int.random(in: 1 ... 20, using: &random)) }
            if Bool.random(using: &random) {
                number += ["e", "E", "e+", "e-", "E-"].randomElement(using: &random)! + String(Int.random(in: 0 ... 400, using: &random))
            }
            count(IntField.self, #"{"i":\#(number)}"#)
            count(DoubleField.self, #"{"d":\#(number)}"#)
            count(FloatField.self, #"{"f":\#(number)}"#)
            count(SmallField.self, #"{"u":\#(number)}"#)
        }
        // Edge cases (underflows read as integers, -0, integers spelled with fractions or
        // exponents beyond what a Double holds exactly) are left to JSONDecoder; every ordinary
        // number is answered: over 90 % of what JSONDecoder decodes, for these fixed seeds.
        #expect(decodable > 300, "seed \(seed)")
        #expect(answered * 10 >= decodable * 9, "seed \(seed): the fast path answered \(answered) of \(decodable)")
    }

    @Test func stringsAreUnescaped() {
        for json in [#"{"s":"plain"}"#, #"{"s":"tab\there \"quoted\" back\\slash \/"}"#, #"{"s":"\u00e9\u65e5"}"#,
                     #"{"s":"\ud83e\uddd1\u200d\ud83d\ude80"}"#, #"{"s":"é 日 🧑‍🚀"}"#, #"{"s":"\b\f\n\r"}"#, #"{"s":""}"#] {
            #expect(agree(TextField.self, json), "\(json)")
        }
        // A lone surrogate is left to JSONDecoder.
        #expect(WireJSON.decodeQuickly(TextField.self, from: Array(#"{"s":"\ud83e"}"#.utf8)) == nil)
    }

    @Test func containersDatesAndOptionals() {
        #expect(agree(Mixed.self, #"{"list":[1,2,3],"names":{"a":true,"b":false},"byID":{"7":"x","-2":"y"},"maybe":null,"when":12.5}"#))
        #expect(agree(Mixed.self, #" { "when" : 0 , "maybe" : 2 , "byID" : { } , "names" : { } , "list" : [ ] } "#))
        // Same shape with the keys in another order and a key JSONDecoder ignores.
        #expect(agree(Mixed.self, #"{"extra":[{"deep":[null]}],"when":1,"list":[],"names":{},"byID":{}}"#))
    }

    @Test func whatIsNotStrictJSONIsLeftToJSONDecoder() {
        for json in ["", " ", "{", #"{"i":}"#, #"{"i":01}"#, #"{"i":1.}"#, #"{"i":.5}"#, #"{"i":1,}"#, #"{"i" 1}"#, #"{"i":1}x"#,
                     #"{'i':1}"#, #"{"i":+1}"#, #"{"i":1e}"#, #"{"i":NaN}"#, #"{"i":1e400}"#, "{\"i\":1,\"s\":\"a\u{1}b\"}", #"{"i":tru}"#] {
            #expect(WireJSON.decodeQuickly(IntField.self, from: Array(json.utf8)) == nil, "\(json)")
        }
        // Too deep for the binary decoder's limit: refused, not a crash.
        let deep = String(repeating: "[", count: 600) + String(repeating: "]", count: 600)
        #expect(WireJSON.decodeQuickly([JSONValue].self, from: Array(deep.utf8)) == nil)
    }

    @Test(arguments: seeds) func mutatedJSONNeverTrapsOrDisagrees(seed: UInt64) throws {
        var source = BinaryValueSource(seed: seed)
        var answered = 0
        for _ in 0 ..< 200 {
            guard let json = try? JSONEncoder().encode(source.event()) else { continue } // infinities
            var bytes = Array(json)
            let position = Int.random(in: 0 ..< bytes.count, using: &source.random)
            switch Int.random(in: 0 ..< 3, using: &source.random) {
            case 0: bytes.remove(at: position)
            case 1: bytes[position] = Array(#"{}[],:"\-01e.tnu "#.utf8).randomElement(using: &source.random)!
            default: bytes.insert(UInt8.random(in: 0 ... 255, using: &source.random), at: position)
            }
            if agree(BinaryFixtureEvent.self, String(decoding: bytes, as: UTF8.self)) { answered += 1 }
            _ = WireJSON.decodeQuickly(JSONValue.self, from: bytes) // must not trap; any answer will do
        }
        // Some mutations leave valid JSON (a space, a digit for a digit): the fast path answers
        // those, and each answer was compared (29 to 43 of 200 for these seeds). A fast path
        // that gave up on them all would have compared nothing.
        #expect(answered >= 20, "seed \(seed): the fast path answered \(answered) of 200 mutated events")
    }
}
