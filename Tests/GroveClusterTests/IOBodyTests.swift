@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
import GroveWire
import Testing

/// A request only JSON can carry: it refuses to encode into anything but JSONEncoder-like
/// encoders, as a type with an exotic Codable conformance may.
private struct JSONOnly: Codable, Equatable {
    var page: Int

    func encode(to encoder: any Encoder) throws {
        if "\(type(of: encoder))".contains("Binary") {
            throw EncodingError.invalidValue(self, .init(codingPath: [], debugDescription: "JSON only"))
        }
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(page, forKey: .page)
    }
}

private struct Page: Codable, Equatable {
    var page: Int
    var tags: [String]
}

@Suite("io bodies", .timeLimit(.minutes(2)))
struct IOBodyTests {
    @Test func bodiesGoInTheBinaryCodecAfterWhatIsAlreadyThere() throws {
        var payload: [UInt8] = [9, 9]
        let value = Page(page: 3, tags: ["a"])
        #expect(try IOBody.encode(value, into: &payload))
        #expect(payload.prefix(2) == [9, 9])
        #expect(Array(payload.dropFirst(2)) == (try BinaryCodec.encode(value)))
        #expect(try IOBody.decode(Page.self, from: payload.dropFirst(2), binary: true, what: "it") == value)
    }

    @Test func aValueTheBinaryCodecRefusesGoesAsJSON() throws {
        var payload: [UInt8] = [9]
        #expect(try IOBody.encode(JSONOnly(page: 4), into: &payload) == false)
        #expect(String(decoding: payload.dropFirst(), as: UTF8.self) == #"{"page":4}"#)
        #expect(try IOBody.decode(JSONOnly.self, from: payload.dropFirst(), binary: false, what: "it") == JSONOnly(page: 4))
    }

    @Test func aJSONRequestIsAnsweredInJSON() throws {
        var payload: [UInt8] = []
        #expect(try IOBody.encode(Page(page: 1, tags: []), binary: false, into: &payload) == false)
        #expect(String(decoding: payload, as: UTF8.self) == #"{"page":1,"tags":[]}"#)
    }

    @Test func bytesInTheWrongCodecSayWhatFailed() {
        let json = Array(#"{"page":1,"tags":[]}"#.utf8)
        let error = #expect(throws: WireError.self) {
            try IOBody.decode(Page.self, from: json[...], binary: true, what: "the response to 'FetchItems'")
        }
        #expect(error?.message.contains("the response to 'FetchItems'") == true)
        #expect(throws: WireError.self) { try IOBody.decode(Page.self, from: [0x01, 0x02], binary: false, what: "it") }
    }
}
