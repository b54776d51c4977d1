@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
import Foundation
import GroveWire
import Testing

/// A keyed instance its machine removes when it ends (`onEnd: "remove"`) takes its dead letters
/// and crash counts with it: the key's next instance is a new machine, not refused the event
/// that crashed the old one. A real worker runtime and coordinator in one process, on a store
/// that outlives the worker.
@Suite(.timeLimit(.minutes(2)))
struct RemovedInstancePoisonTests {
    static let topology = Topology(
        name: "removed-poison",
        coordinator: .init(clients: "inproc://clients", workers: "inproc://workers", events: "inproc://events"),
        workers: [.init(name: "w")],
        machines: [.init(name: "sessions", type: "LedgerMachine", worker: "w", keyed: true, durability: .state, onEnd: .remove)],
        heartbeat: .init(intervalMs: 50, timeoutMs: 200)
    )

    /// A dead letter of `add(amount)` at `address`, as a worker writes one at the second crash.
    static func deadLetter(_ amount: Int, at address: String) -> DeadLetter {
        let identity = PoisonEventTests.identity(.add(amount))
        return DeadLetter(address: address, type: "LedgerMachine", event: Array(identity.dropFirst()), binary: identity[0] == 1,
                          error: "the worker died while running it, 2 times", crashes: 2, time: 1_700_000_000_000)
    }

    /// A store with `add(13)` quarantined at `sessions/a` and `sessions/b`, and one crash
    /// counted against `add(21)` at `sessions/a`.
    static func store() throws -> MemoryMachineStore {
        let store = MemoryMachineStore()
        var commit = StoreCommit()
        commit.deadLetters = [deadLetter(13, at: "sessions/a"), deadLetter(13, at: "sessions/b")]
        try store.commit(commit)
        #expect(try store.countCrash(of: "sessions/a", event: PoisonEventTests.identity(.add(21)), at: 0) == 1)
        return store
    }

    @Test func aRemovedInstancesDeadLettersAndCrashesGoWithIt() async throws {
        let cluster = InMemoryCluster(topology: Self.topology)
        let store = try Self.store()
        let worker = try PoisonEventTests.worker(store, died: false)
        defer { worker.stop() }
        try await PoisonEventTests.started(worker, in: cluster)

        #expect(try await PoisonEventTests.send(#"{"add":{"_0":1}}"#, to: "sessions/a", cluster, worker, correlation: 1).text == #"{"total":1}"#)
        let refused = try await PoisonEventTests.send(#"{"add":{"_0":13}}"#, to: "sessions/a", cluster, worker, correlation: 2)
        #expect(refused.header.kind == .error, "quarantined while its instance lives")

        let stopped = try await PoisonEventTests.request(WireMessage(Header(.stop, correlation: 3), address: "sessions/a"),
                                                         through: cluster, to: worker)
        #expect(stopped.text == #"{"total":1}"#)
        // Removed with it, before the stop's reply left; the other instance's stays.
        #expect(try store.deadLetters().map(\.address) == ["sessions/b"])
        #expect(try store.crashes().isEmpty, "the crash counted against add(21) at sessions/a")

        // The key's next instance runs the event that crashed the old one.
        let fresh = try await PoisonEventTests.send(#"{"add":{"_0":13}}"#, to: "sessions/a", cluster, worker, correlation: 4)
        #expect(fresh.text == #"{"total":13}"#)
        let other = try await PoisonEventTests.send(#"{"add":{"_0":13}}"#, to: "sessions/b", cluster, worker, correlation: 5)
        #expect(other.header.kind == .error, "sessions/b was not removed: still refused")
    }
}
