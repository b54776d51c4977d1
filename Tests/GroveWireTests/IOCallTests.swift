@_spi(GroveInternal) import GroveWire
import Testing

@Suite("io call payloads", .timeLimit(.minutes(2)))
struct IOCallTests {
    static func request(name: String = "FetchItems", effect: String = #""fetch""#, body: [UInt8]) throws -> [UInt8] {
        var payload: [UInt8] = []
        try IOCallHead.write(name: name, effect: Array(effect.utf8), into: &payload)
        return payload + body
    }

    @Test func headIsReadWithoutTheBody() throws {
        let body: [UInt8] = [0xFF, 0xFE, 0x00]  // not JSON, not UTF-8: never looked at
        let payload = try Self.request(name: "FetchÎtems", effect: "17", body: body)
        #expect(payload.prefix(2) == [0, 11])  // "FetchÎtems" is 11 bytes of UTF-8
        let head = try IOCallHead(reading: payload)
        #expect(head.name == "FetchÎtems")
        #expect(Array(payload[head.effect]) == Array("17".utf8))
        #expect(Array(payload[head.body]) == body)
    }

    @Test func anEmptyBodyIsAllowed() throws {
        let payload = try Self.request(body: [])
        let head = try IOCallHead(reading: payload)
        #expect(head.body.isEmpty)
        #expect(head.body.lowerBound == payload.count)
    }

    @Test(arguments: [[], [0], [0, 5, 65, 66], [0, 1, 65], [0, 1, 65, 0, 3, 49]] as [[UInt8]])
    func truncatedHeadsAreRefused(payload: [UInt8]) {
        #expect(throws: WireError(.malformedFrame, "")) { try IOCallHead(reading: payload) }
    }

    @Test func aNameThatIsNotUTF8IsRefused() {
        #expect(throws: WireError(.malformedFrame, "")) { try IOCallHead(reading: [0, 1, 0xFF, 0, 0]) }
    }

    @Test func namesLongerThanTheirLengthFieldAreRefused() throws {
        var payload: [UInt8] = []
        let error = #expect(throws: WireError.self) {
            try IOCallHead.write(name: String(repeating: "a", count: 65_536), effect: [], into: &payload)
        }
        #expect(error?.code == .oversized)
        #expect(payload.isEmpty)
        #expect(throws: Never.self) {
            try IOCallHead.write(name: String(repeating: "a", count: 65_535), effect: [], into: &payload)
        }
        #expect(try IOCallHead(reading: payload).name.count == 65_535)
    }

    @Test func aResponseIsPassedAsItsBytes() throws {
        let payload: [UInt8] = [0, 0xFF, 0x01]
        #expect(try IOCallResult(reading: payload, binary: true) == .response([0xFF, 0x01], binary: true))
        #expect(try IOCallResult.failure(in: payload) == nil)
    }

    @Test func aFailureIsJSONAfterItsOutcomeByte() throws {
        let payload = IOCallResult.payload(failing: "timeout", "upstream slow")
        #expect(payload.first == 1)
        #expect(String(decoding: payload.dropFirst(), as: UTF8.self) == #"{"code":"timeout","message":"upstream slow"}"#)
        let failure = IOCallResult.Failure(code: "timeout", message: "upstream slow")
        #expect(try IOCallResult(reading: payload, binary: false) == .failure(failure))
        #expect(try IOCallResult.failure(in: payload) == failure)
    }

    @Test(arguments: [[], [2, 0], [1] + Array("not json".utf8)] as [[UInt8]])
    func unreadableResultsAreRefused(payload: [UInt8]) {
        #expect(throws: WireError.self) { try IOCallResult(reading: payload, binary: false) }
        #expect(throws: WireError.self) { try IOCallResult.failure(in: payload) }
    }
}
