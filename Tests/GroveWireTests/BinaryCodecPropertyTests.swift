import Foundation
import GroveWire
import Testing

/// A recursive value of every shape Codable produces, for generated tests.
indirect enum BinaryTree: Codable, Equatable {
    case int(Int64)
    case uint(UInt64)
    case double(Double)
    case bool(Bool)
    case string(String)
    case optional(BinaryTree?)
    case array([BinaryTree])
    case dict([String: BinaryTree])
    case intDict([Int: BinaryTree])
    case event(BinaryFixtureEvent)
    case wide(Int128)
}

/// Draws random values from a seeded generator.
struct BinaryValueSource {
    var random: SeededGenerator

    init(seed: UInt64) { random = SeededGenerator(seed: seed) }

    mutating func int() -> Int64 {
        switch Int.random(in: 0 ..< 4, using: &random) {
        case 0: Int64.random(in: -3 ... 3, using: &random)
        case 1: [Int64.min, Int64.max, 0, -1][Int.random(in: 0 ..< 4, using: &random)]
        case 2: Int64.random(in: -100_000 ... 100_000, using: &random)
        default: Int64(bitPattern: random.next())
        }
    }

    mutating func double() -> Double {
        switch Int.random(in: 0 ..< 3, using: &random) {
        case 0:
            return [0.0, -0.0, .infinity, -.infinity, .greatestFiniteMagnitude, .leastNonzeroMagnitude][Int.random(in: 0 ..< 6, using: &random)]
        case 1:
            return Double.random(in: -1000 ... 1000, using: &random)
        default:
            let value = Double(bitPattern: random.next())
            return value.isNaN ? 1.0 : value
        }
    }

    mutating func string() -> String {
        let alphabet: [Character] = ["a", "Z", "0", " ", "_", "é", "ß", "日", "🧑‍🚀", "\u{301}", "\0", "\n"]
        let length = Int.random(in: 0 ..< (Bool.random(using: &random) ? 4 : 40), using: &random)
        return String((0 ..< length).map { _ in alphabet[Int.random(in: 0 ..< alphabet.count, using: &random)] })
    }

    mutating func event() -> BinaryFixtureEvent {
        switch Int.random(in: 0 ..< 5, using: &random) {
        case 0: .increment
        case 1: .add(Int(int()))
        case 2: .updateEmail(string())
        case 3: .start(interval: double())
        default: .rename(first: string(), last: Bool.random(using: &random) ? nil : string())
        }
    }

    mutating func tree(depth: Int) -> BinaryTree {
        let leaf = depth <= 0 || Int.random(in: 0 ..< 3, using: &random) == 0
        switch Int.random(in: 0 ..< (leaf ? 6 : 10), using: &random) {
        case 0 where Bool.random(using: &random): return .wide(Int128(int()) << Int.random(in: 0 ..< 64, using: &random))
        case 0: return .int(int())
        case 1: return .uint(random.next() >> UInt64.random(in: 0 ..< 64, using: &random))
        case 2: return .double(double())
        case 3: return .bool(Bool.random(using: &random))
        case 4: return .string(string())
        case 5: return .event(event())
        case 6: return .optional(Bool.random(using: &random) ? nil : tree(depth: depth - 1))
        case 7: return .array((0 ..< count()).map { _ in tree(depth: depth - 1) })
        case 8: return .dict(Dictionary((0 ..< count()).map { _ in (string(), tree(depth: depth - 1)) }, uniquingKeysWith: { first, _ in first }))
        default: return .intDict(Dictionary((0 ..< count()).map { _ in (Int(int()), tree(depth: depth - 1)) }, uniquingKeysWith: { first, _ in first }))
        }
    }

    mutating func state() -> BinaryFixtureState {
        BinaryFixtureState(count: Int(int()), email: string(), verified: Bool.random(using: &random), score: double(),
                           nickname: Bool.random(using: &random) ? nil : string(),
                           items: (0 ..< count()).map { _ in BinaryFixtureItem(id: Int(int()), name: string(), done: Bool.random(using: &random)) })
    }

    mutating func bytes(maximumCount: Int) -> [UInt8] {
        (0 ..< Int.random(in: 0 ... maximumCount, using: &random)).map { _ in
            // Mostly small bytes, so random input often looks like tags, counts and lengths.
            Bool.random(using: &random) ? UInt8.random(in: 0 ... 10, using: &random) : UInt8.random(in: 0 ... 255, using: &random)
        }
    }

    private mutating func count() -> Int {
        Int.random(in: 0 ..< 5, using: &random) == 0 ? Int.random(in: 0 ..< 140, using: &random) : Int.random(in: 0 ..< 4, using: &random)
    }
}

/// Whether decoding `bytes` as `T` throws (true) or returns (false); it must not trap either way.
private func decodingThrows<T: Decodable>(_ type: T.Type, _ bytes: ArraySlice<UInt8>) -> Bool {
    (try? BinaryCodec.decode(type, from: bytes)) == nil
}

@Suite("BinaryCodec properties", .timeLimit(.minutes(2)))
struct BinaryCodecPropertyTests {
    static let seeds: [UInt64] = Array(1 ... 8)

    @Test(arguments: seeds) func randomTreesRoundTrip(seed: UInt64) throws {
        var source = BinaryValueSource(seed: seed)
        for _ in 0 ..< 100 {
            let tree = source.tree(depth: 5)
            let bytes = try BinaryCodec.encode(tree)
            #expect(try BinaryCodec.decode(BinaryTree.self, from: bytes) == tree, "seed \(seed)")
        }
    }

    @Test(arguments: seeds) func randomEventsAndStatesRoundTripAndAgreeWithJSON(seed: UInt64) throws {
        var source = BinaryValueSource(seed: seed)
        for _ in 0 ..< 300 {
            let event = source.event()
            #expect(try BinaryCodec.decode(BinaryFixtureEvent.self, from: BinaryCodec.encode(event)) == event, "seed \(seed)")
            let state = source.state()
            let decoded = try BinaryCodec.decode(BinaryFixtureState.self, from: BinaryCodec.encode(state))
            #expect(decoded == state, "seed \(seed)")
            // Where JSON can carry the value (no infinities), both codecs decode the same thing.
            if state.score.isFinite {
                let viaJSON = try JSONDecoder().decode(BinaryFixtureState.self, from: JSONEncoder().encode(state))
                #expect(viaJSON == decoded, "seed \(seed)")
            }
        }
    }

    @Test(arguments: seeds) func everyTruncationOfAValidEncodingThrows(seed: UInt64) throws {
        var source = BinaryValueSource(seed: seed)
        for _ in 0 ..< 30 {
            let tree = source.tree(depth: 3)
            let bytes = try BinaryCodec.encode(tree)
            // Every prefix of small encodings, 60 spread over large ones, always the last byte cut.
            let ends = Array(stride(from: 0, to: bytes.count, by: max(1, bytes.count / 60))) + [bytes.count - 1]
            for end in ends {
                #expect(decodingThrows(BinaryTree.self, bytes[..<end]), "seed \(seed), prefix \(end) of \(bytes.count)")
            }
            let state = try BinaryCodec.encode(source.state())
            for end in 0 ..< min(state.count, 300) {
                #expect(decodingThrows(BinaryFixtureState.self, state[..<end]), "seed \(seed), prefix \(end) of \(state.count)")
            }
        }
    }

    @Test(arguments: seeds) func randomBytesNeverTrap(seed: UInt64) {
        var source = BinaryValueSource(seed: seed)
        var decoded = 0
        for _ in 0 ..< 3_000 {
            let bytes = source.bytes(maximumCount: 24)[...]
            if !decodingThrows(BinaryTree.self, bytes) { decoded += 1 }
            if !decodingThrows(BinaryFixtureEvent.self, bytes) { decoded += 1 }
            _ = decodingThrows(BinaryFixtureState.self, bytes)
            _ = decodingThrows([String: [Int?]].self, bytes)
            _ = decodingThrows(BinaryFixtureManualLenient.self, bytes)
        }
        // Random bytes are almost never a valid encoding of these types.
        #expect(decoded < 300, "seed \(seed): \(decoded) random inputs decoded")
    }

    @Test(arguments: seeds) func corruptedEncodingsNeverTrap(seed: UInt64) throws {
        var source = BinaryValueSource(seed: seed)
        var rejected = 0
        for _ in 0 ..< 300 {
            var bytes = try BinaryCodec.encode(source.tree(depth: 3))
            let position = Int.random(in: 0 ..< bytes.count, using: &source.random)
            bytes[position] = UInt8.random(in: 0 ... 255, using: &source.random)
            if decodingThrows(BinaryTree.self, bytes[...]) { rejected += 1 }
        }
        #expect(rejected > 0, "seed \(seed)")
    }
}

/// Reads keys out of order and optionally, to drive the lookup paths with random input.
struct BinaryFixtureManualLenient: Decodable {
    enum CodingKeys: String, CodingKey { case a, b, c }
    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        _ = container.allKeys
        _ = try container.decodeIfPresent(String.self, forKey: .c)
        _ = try container.decodeIfPresent([Int].self, forKey: .a)
        if container.contains(.b) { _ = try container.decodeNil(forKey: .b) }
    }
}
