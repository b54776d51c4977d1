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

/// Keys bound to their sender (issue 34, ``IdempotencyKey/appendBound(_:to:into:correlation:)``):
/// the sender's key in front of the client id, the rest as it came; a key a client may not send
/// is refused, never passed on unbound.
@Suite("Idempotency keys bound to their sender", .timeLimit(.minutes(2)))
struct IdempotencyKeySenderTests {
    static let alice = Array(String(repeating: "A", count: IdempotencyKey.senderLength).utf8)
    static let mallory = Array(String(repeating: "M", count: IdempotencyKey.senderLength).utf8)
    static let client = Array(repeating: UInt8(0x5A), count: 16)

    static func bound(_ payload: [UInt8], to sender: [UInt8]) throws -> [UInt8] {
        var out: [UInt8] = []
        try IdempotencyKey.appendBound(payload, to: sender, into: &out, correlation: 4)
        return out
    }

    @Test func theSendersKeyGoesInFrontOfTheClientIdAndTheRestIsUnchanged() throws {
        let payload = IdempotencyKey(client: Self.client, sequence: 7).prefixed(IdempotencyKeyTests.event)
        let (key, body) = try IdempotencyKey.split(try Self.bound(payload, to: Self.alice)[...], longest: IdempotencyKey.maximumBoundClientLength)
        #expect(key == IdempotencyKey(client: Self.alice + Self.client, sequence: 7))
        #expect(Array(body) == IdempotencyKeyTests.event)
        // Nothing bound for a trusted peer: the key as it was sent.
        #expect(try Self.bound(payload, to: []) == payload)
    }

    @Test func theSameIdAndSequenceFromTwoSendersAreTwoKeys() throws {
        let payload = IdempotencyKey(client: Self.client, sequence: 1).prefixed(IdempotencyKeyTests.event)
        let longest = IdempotencyKey.maximumBoundClientLength
        let real = try IdempotencyKey.split(try Self.bound(payload, to: Self.alice)[...], longest: longest).key
        let forged = try IdempotencyKey.split(try Self.bound(payload, to: Self.mallory)[...], longest: longest).key
        #expect(real != forged)
        // A forger that puts the real sender's key in its own client id is bound behind its own.
        let spoof = IdempotencyKey(client: Self.alice + Self.client, sequence: 1).prefixed(IdempotencyKeyTests.event)
        #expect(try IdempotencyKey.split(try Self.bound(spoof, to: Self.mallory)[...], longest: longest).key != real)
    }

    @Test func theLongestClientIdBindsAndALongerOneIsRefused() throws {
        let longest = IdempotencyKey(client: Array(repeating: 1, count: IdempotencyKey.maximumClientLength), sequence: 3).prefixed([UInt8]())
        let bound = try Self.bound(longest, to: Self.alice)
        #expect(bound.first == UInt8(IdempotencyKey.maximumBoundClientLength))
        // What a client may send is checked before anything is bound: a bound-length id from a
        // client would otherwise pass for another sender's.
        let tooLong = [UInt8(IdempotencyKey.maximumClientLength + 1)] + Array(repeating: 1, count: 80)
        var out: [UInt8] = [9]
        #expect {
            try IdempotencyKey.appendBound(tooLong, to: Self.alice, into: &out, correlation: 4)
        } throws: { error in
            (error as? WireError)?.code == .malformedFrame && (error as? WireError)?.message.contains("length byte says 65") == true
        }
        #expect(out == [9], "nothing appended")
        #expect(throws: WireError.self) { try IdempotencyKey.check(tooLong) }
    }

    @Test func aTraceContextStaysInFrontOfTheBoundKey() throws {
        let trace = Array("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01".utf8)
        let keyed = IdempotencyKey(client: Self.client, sequence: 2).prefixed(IdempotencyKeyTests.event)
        let payload = TraceParent.prefixed(trace, keyed)
        let bound = try IdempotencyKey.bound(payload[...], flags: [.keyed, .traced], to: Self.alice)
        let (readTrace, rest) = try TraceParent.split(bound[...])
        #expect(Array(readTrace) == trace)
        #expect(try IdempotencyKey.split(rest, longest: IdempotencyKey.maximumBoundClientLength).key
                == IdempotencyKey(client: Self.alice + Self.client, sequence: 2))
    }
}
