@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
import Testing

/// The coordinator's table of requests in flight: it must agree with a dictionary whatever the
/// order of answers, including ids whose ring slot an older unanswered request still holds.
@Suite(.timeLimit(.minutes(2)))
struct PendingTableTests {
    static func request(worker: Int, _ id: UInt64) -> CoordinatorCore.Pending {
        .init(origin: .client([1, 2, 3], id), worker: worker, address: "counter/\(id)")
    }

    @Test func agreesWithADictionaryWhenAnswersComeOutOfOrder() {
        var table = PendingTable()
        var model: [UInt64: CoordinatorCore.Pending] = [:]
        var generator = SeededRandom(seed: 7)
        var next: UInt64 = 1
        var answerable: [UInt64] = []  // every id but multiples of 1000, which stay unanswered
        // The unanswered ones stay for more ids than the ring has slots (1 << 14): later ids
        // land on their slots.
        for _ in 0 ..< 60_000 {
            for _ in 0 ..< Int.random(in: 0 ... 2, using: &generator) {
                let request = Self.request(worker: Int(next % 3), next)
                table.insert(request, for: next)
                model[next] = request
                if next % 1_000 != 0 { answerable.append(next) }
                next += 1
            }
            // Answer one at random, out of order, most of the time.
            if !answerable.isEmpty, Int.random(in: 0 ..< 3, using: &generator) != 0 {
                let index = Int.random(in: answerable.indices, using: &generator)
                answerable.swapAt(index, answerable.count - 1)
                let id = answerable.removeLast()
                #expect(table.removeValue(forKey: id)?.address == model.removeValue(forKey: id)?.address)
                #expect(table.removeValue(forKey: id) == nil, "answered twice")
            }
        }
        #expect(table.count == model.count)
        #expect(Set(table.keys) == Set(model.keys))
        for id in model.keys.sorted().prefix(50) { #expect(table[id]?.address == model[id]?.address) }
        #expect(table[0] == nil)
        #expect(table[next] == nil)
        let lost = table.removeAll(sentTo: 1)
        #expect(lost.map(\.id) == model.filter { $0.value.worker == 1 }.keys.sorted())
        #expect(table.count == model.count - lost.count)
        #expect(!table.keys.contains { model[$0]?.worker == 1 })
    }
}

/// A small deterministic generator (SplitMix64), so a failure can be replayed.
struct SeededRandom: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
