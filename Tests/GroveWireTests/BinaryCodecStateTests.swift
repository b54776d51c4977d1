import GroveWire
import Testing

/// Where a type puts the encoder or decoder it was given. Each is used by one test only.
final class BinaryFixtureKeeper: @unchecked Sendable {
    var encoder: (any Encoder)?
    var decoder: (any Decoder)?
}

/// Keeps its encoder and decoder, which Codable does not allow but cannot prevent.
struct BinaryFixtureEscaping: Codable {
    static let keeper = BinaryFixtureKeeper()
    var value: Int

    init(value: Int) { self.value = value }

    init(from decoder: any Decoder) throws {
        Self.keeper.decoder = decoder
        value = try decoder.singleValueContainer().decode(Int.self)
    }

    func encode(to encoder: any Encoder) throws {
        Self.keeper.encoder = encoder
        var container = encoder.singleValueContainer()
        try container.encode(value)
    }
}

@Suite("BinaryCodec state reuse", .timeLimit(.minutes(2)))
struct BinaryCodecStateTests {
    @Test func concurrentCallsDoNotShareState() async throws {
        // Encoders and decoders reuse a spare state between calls; calls on many threads at once
        // must each get their own.
        let results = await withTaskGroup(of: Bool.self) { group in
            for task in 0 ..< 8 {
                group.addTask {
                    var source = BinaryValueSource(seed: UInt64(100 + task))
                    for _ in 0 ..< 400 {
                        let state = source.state()
                        let event = source.event()
                        guard let stateBytes = try? BinaryCodec.encode(state), let eventBytes = try? BinaryCodec.encode(event),
                              (try? BinaryCodec.decode(BinaryFixtureState.self, from: stateBytes)) == state,
                              (try? BinaryCodec.decode(BinaryFixtureEvent.self, from: eventBytes)) == event
                        else { return false }
                    }
                    return true
                }
            }
            return await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(results == Array(repeating: true, count: 8))
    }

    @Test func aDecoderKeptPastItsCallReadsNothing() throws {
        var bytes = try BinaryCodec.encode(7)
        #expect(try BinaryCodec.decode(BinaryFixtureEscaping.self, from: bytes).value == 7)
        bytes = [0xFF, 0xFF]  // The decoded bytes are gone; the kept decoder must not read them.
        let kept = try #require(BinaryFixtureEscaping.keeper.decoder)
        #expect(throws: BinaryCodingError.self) { try kept.singleValueContainer().decode(Int.self) }
        // Later calls are unaffected.
        #expect(try BinaryCodec.decode(Int.self, from: BinaryCodec.encode(8)) == 8)
    }

    @Test func anEncoderKeptPastItsCallWritesNowhere() throws {
        let bytes = try BinaryCodec.encode(BinaryFixtureEscaping(value: 7))
        let kept = try #require(BinaryFixtureEscaping.keeper.encoder)
        var container = kept.singleValueContainer()
        try? container.encode(99)
        #expect(bytes == [0x03, 0x0E])
        #expect(try BinaryCodec.encode(5) == [0x03, 0x0A], "the kept encoder's state is not reused")
    }
}
