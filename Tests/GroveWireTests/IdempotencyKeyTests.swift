import GroveWire
import Testing

/// The idempotency key on the wire (docs/PROTOCOL.md, "Idempotency keys"): flag bit 4, then a
/// length byte, the client id and an 8-byte sequence in front of the payload.
@Suite("Idempotency keys on the wire", .timeLimit(.minutes(2)))
struct IdempotencyKeyTests {
    static let event = Array(#"{"add":{"_0":1}}"#.utf8)

    @Test func aKeyRoundTripsInFrontOfThePayload() throws {
        let key = IdempotencyKey(client: [0xAB, 0x01, 0xFF], sequence: 0x0102_0304_0506_0708)
        let payload = key.prefixed(Self.event)
        #expect(payload.prefix(12) == [3, 0xAB, 0x01, 0xFF, 1, 2, 3, 4, 5, 6, 7, 8])
        let (read, body) = try IdempotencyKey.split(payload[...])
        #expect(read == key)
        #expect(Array(body) == Self.event)
        #expect(key.description == "ab01ff#72623859790382856")
    }

    @Test func aKeyWithTheLongestClientIdAndAnEmptyEventSplits() throws {
        let key = IdempotencyKey(client: Array(repeating: 7, count: IdempotencyKey.maximumClientLength), sequence: .max)
        let (read, body) = try IdempotencyKey.split(key.prefixed([UInt8]())[...])
        #expect(read == key)
        #expect(body.isEmpty)
    }

    @Test(arguments: [
        ([UInt8](), "the payload is empty"),
        ([0] + Array(repeating: 0, count: 8), "client id length byte says 0"),
        ([65] + Array(repeating: 1, count: 80), "client id length byte says 65"),
        ([4, 1, 2, 3, 4, 0, 0, 0], "the key needs 13 bytes"),
        ([1, 7, 0, 0, 0, 0, 0, 0, 0, 0, 42], "its sequence is 0"),
    ])
    func aBadKeyIsRefusedNamingThePayloadFrame(payload: [UInt8], why: String) {
        #expect {
            try IdempotencyKey.split(payload[...], correlation: 9)
        } throws: { error in
            guard let error = error as? WireError else { return false }
            return error.code == .malformedFrame && error.correlation == 9 && error.message.contains("frame 2 (the payload)")
                && error.message.contains("flag bit 4") && error.message.contains(why)
        }
    }

    @Test func randomClientIdsAreSixteenBytesAndDiffer() {
        let first = IdempotencyKey.randomClient(), second = IdempotencyKey.randomClient()
        #expect(first.count == 16)
        #expect(first != second)
    }
}
