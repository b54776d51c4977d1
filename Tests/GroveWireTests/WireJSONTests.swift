import Foundation
import GroveWire
import Testing

/// An event shaped like the example machines': enum cases with and without associated values.
private enum FormEvent: Codable, Equatable {
    case updateEmail(String)
    case updateAge(Int)
    case rename(first: String, last: String)
    case submit
}

private struct Order: Codable, Equatable {
    struct Item: Codable, Equatable {
        var name: String
        var quantity: Int
    }

    var id: String
    var items: [Item]
}

private func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

@Suite("WireJSON", .timeLimit(.minutes(2)))
struct WireJSONTests {
    @Test func decodesValidPayloads() throws {
        #expect(try WireJSON.decode(FormEvent.self, from: bytes(#"{"updateEmail":{"_0":"ada@example.com"}}"#))
            == .updateEmail("ada@example.com"))
        #expect(try WireJSON.decode(FormEvent.self, from: bytes(#"{"submit":{}}"#)) == .submit)
        #expect(try WireJSON.decode(FormEvent.self, from: bytes(#"{"rename":{"first":"Ada","last":"Lovelace"}}"#))
            == .rename(first: "Ada", last: "Lovelace"))
    }

    @Test func encodeIsCompactSortedAndRoundTrips() throws {
        let order = Order(id: "a/1", items: [.init(name: "tea", quantity: 2)])
        let encoded = try WireJSON.encode(order)
        #expect(String(decoding: encoded, as: UTF8.self) == #"{"id":"a/1","items":[{"name":"tea","quantity":2}]}"#)
        #expect(try WireJSON.decode(Order.self, from: encoded) == order)

        let event = FormEvent.updateEmail("x")
        #expect(String(decoding: try WireJSON.encode(event), as: UTF8.self) == #"{"updateEmail":{"_0":"x"}}"#)
    }

    @Test func missingAssociatedValueNamesItsPath() {
        let error = #expect(throws: WireError.self) {
            try WireJSON.decode(FormEvent.self, from: bytes(#"{"updateEmail":{}}"#))
        }
        #expect(error?.code == .undecodableEvent)
        #expect(error?.path == "$.updateEmail._0")
        #expect(error?.message.contains("'_0'") == true)
        #expect(error?.message.contains("FormEvent") == true)
    }

    @Test func missingLabelledAssociatedValueNamesItsPath() {
        let error = #expect(throws: WireError.self) {
            try WireJSON.decode(FormEvent.self, from: bytes(#"{"rename":{"first":"Ada"}}"#))
        }
        #expect(error?.code == .undecodableEvent)
        #expect(error?.path == "$.rename.last")
    }

    @Test func missingKeyInAnArrayElementNamesTheIndex() {
        let error = #expect(throws: WireError.self) {
            try WireJSON.decode(Order.self, from: bytes(#"{"id":"o","items":[{"name":"a","quantity":1},{"quantity":2}]}"#))
        }
        #expect(error?.code == .undecodableEvent)
        #expect(error?.path == "$.items[1].name")
    }

    @Test func wrongTypeNamesItsPath() {
        let error = #expect(throws: WireError.self) {
            try WireJSON.decode(Order.self, from: bytes(#"{"id":"o","items":[{"name":"a","quantity":"many"}]}"#))
        }
        #expect(error?.code == .undecodableEvent)
        #expect(error?.path == "$.items[0].quantity")
        #expect(error?.message.contains("wrong type") == true)

        let associated = #expect(throws: WireError.self) {
            try WireJSON.decode(FormEvent.self, from: bytes(#"{"updateAge":{"_0":"forty"}}"#))
        }
        #expect(associated?.path == "$.updateAge._0")
    }

    @Test func nullWhereAValueIsNeededNamesItsPath() {
        let error = #expect(throws: WireError.self) {
            try WireJSON.decode(Order.self, from: bytes(#"{"id":null,"items":[]}"#))
        }
        #expect(error?.code == .undecodableEvent)
        #expect(error?.path == "$.id")
    }

    @Test func unknownCaseIsUndecodableAtTheRoot() {
        let error = #expect(throws: WireError.self) {
            try WireJSON.decode(FormEvent.self, from: bytes(#"{"explode":{}}"#))
        }
        #expect(error?.code == .undecodableEvent)
        #expect(error?.path?.hasPrefix("$") == true)
    }

    @Test func theCallerChoosesTheCodeForWrongShapes() {
        let error = #expect(throws: WireError.self) {
            try WireJSON.decode(Order.self, from: bytes(#"{"id":"o"}"#), code: .malformedFrame, what: "the order")
        }
        #expect(error?.code == .malformedFrame)
        #expect(error?.path == "$.items")
        #expect(error?.message.hasPrefix("the order") == true)
    }

    @Test(arguments: [#"{"updateEmail":"#, "", "not json", #"{"a" 1}"#, "[1 2]", "\u{FEFF}{]"])
    func malformedJSONIsMalformedJSONWhateverTheCode(text: String) {
        let error = #expect(throws: WireError.self) {
            try WireJSON.decode(FormEvent.self, from: bytes(text), code: .registrationRejected)
        }
        #expect(error?.code == .malformedJSON)
        #expect(error?.path == nil)
        #expect(error?.message.contains("not valid JSON") == true)
    }

    @Test func invalidUTF8IsMalformedJSON() {
        let error = #expect(throws: WireError.self) {
            try WireJSON.decode(FormEvent.self, from: [0x7B, 0x22, 0xFF, 0x22, 0x3A, 0x31, 0x7D])
        }
        #expect(error?.code == .malformedJSON)
    }

    @Test func pathRendersKeysAndIndexes() {
        struct Key: CodingKey {
            var stringValue: String
            var intValue: Int?
            init(stringValue: String) { self.stringValue = stringValue }
            init(intValue: Int) {
                self.stringValue = "Index \(intValue)"
                self.intValue = intValue
            }
        }
        #expect(WireJSON.path([]) == "$")
        #expect(WireJSON.path([Key(stringValue: "machines"), Key(intValue: 2), Key(stringValue: "worker")])
            == "$.machines[2].worker")
        #expect(WireJSON.path([Key(intValue: 0), Key(intValue: 10)]) == "$[0][10]")
    }
}
