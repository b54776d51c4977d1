import Foundation
@testable import GroveWire
import Testing

private struct Profile: Codable, Equatable {
    var name: String
    var tags: [String]
    var scores: [String: Int]
    var byID: [Int: Bool]
    var nested: [[Int?]]
    var maybe: String?
    var none: Int?
    var unsigned: UInt64
}

private struct Special: Codable {
    var when = Date(timeIntervalSince1970: 5)
    var blob = Data([1, 2, 3])
    var link = URL(string: "https://example.com/a?b=c")!
    var amount = Decimal(string: "12.50")!
}

/// `WireJSON.encode` writes exactly what `JSONEncoder` (sorted keys, unescaped slashes) writes,
/// whether it takes its fast path through the binary codec or not.
@Suite("WireJSON.encode against JSONEncoder", .timeLimit(.minutes(2)))
struct BinaryJSONWriterTests {
    static let seeds: [UInt64] = Array(1 ... 8)

    /// Encodes `value` both ways and expects the same bytes (and, when `expectFast` is given,
    /// that the fast path was or was not taken). A value JSONEncoder refuses (an infinity) has
    /// nothing to compare: that fails unless `mayBeRefused`, and returns `false` either way, so
    /// a test that compared nothing can tell.
    /// - Returns: Whether there were bytes to compare.
    @discardableResult
    private func expectSameBytes<T: Encodable>(_ value: T, fast expectFast: Bool? = nil, mayBeRefused: Bool = false,
                                               sourceLocation: SourceLocation = #_sourceLocation) -> Bool {
        let foundation: [UInt8]
        do {
            foundation = try WireJSON.encodeWithFoundation(value)
        } catch {
            if !mayBeRefused { Issue.record("JSONEncoder refused \(value): \(error)", sourceLocation: sourceLocation) }
            return false
        }
        let ours = try? WireJSON.encode(value)
        #expect(ours == foundation, "\(String(decoding: ours ?? [], as: UTF8.self)) != \(String(decoding: foundation, as: UTF8.self))",
                sourceLocation: sourceLocation)
        if let expectFast {
            let fast = (try? BinaryCodec.encode(value, refusing: WireJSON.encodesItsOwnWay)).flatMap(BinaryJSONWriter.json(from:)) != nil
            #expect(fast == expectFast, "fast path taken: \(fast)", sourceLocation: sourceLocation)
        }
        return true
    }

    @Test func statesWithoutFloatingPointTakeTheFastPath() {
        let profile = Profile(name: "Ada \"L\" / \\ \u{1}\n\t é 日 🧑‍🚀", tags: ["a", "", "b"], scores: ["z": 1, "B": -2, "_": 3, "a_b": 4, "x9": 6],
                              byID: [:], nested: [[1, nil], []], maybe: "x", none: nil, unsigned: .max)
        expectSameBytes(profile, fast: true)
        // Integer keys ([Int: V], or "10" in [String: V]) sort as text: left to JSONEncoder.
        var numbered = profile
        numbered.byID = [10: true, -1: false, 9: true]
        numbered.scores["10"] = 5
        expectSameBytes(numbered, fast: false)
        expectSameBytes(["count": 42], fast: true)
        expectSameBytes(BinaryFixtureEvent.increment, fast: true)
        expectSameBytes(BinaryFixtureEvent.rename(first: "Ada", last: nil), fast: true)
        expectSameBytes([Int64.min, Int64.max], fast: true)
        expectSameBytes("top-level string", fast: true)
        expectSameBytes(Optional<Int>.none, fast: true)
    }

    @Test func whatJSONEncoderWritesItsOwnWayIsLeftToIt() {
        expectSameBytes(Special(), fast: false)
        expectSameBytes([1.5, -0.0, 1e20], fast: false)
        expectSameBytes(BinaryFixtureEvent.start(interval: 0.25), fast: false)
        expectSameBytes(["é": 1, "e": 2], fast: false) // non-ASCII keys: String order is not byte order
        expectSameBytes([Int128(1) << 100], fast: false)
    }

    @Test(arguments: seeds) func randomValuesEncodeLikeJSONEncoder(seed: UInt64) {
        var source = BinaryValueSource(seed: seed)
        var compared = 0
        for _ in 0 ..< 100 {
            // Infinities and NaNs, which JSONEncoder refuses, are among the random values.
            for same in [expectSameBytes(source.tree(depth: 4), mayBeRefused: true), expectSameBytes(source.event(), mayBeRefused: true),
                         expectSameBytes(source.state(), mayBeRefused: true)] where same {
                compared += 1
            }
        }
        // Most values are finite (276 to 288 of 300 for these seeds): a run that compared few
        // of them proved little.
        #expect(compared >= 250, "seed \(seed): \(compared) of 300 values had bytes to compare")
    }
}
