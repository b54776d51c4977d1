@testable import GroveCluster
@testable import GroveWorker
import Grove
import GroveTesting
import GroveWire
import Synchronization
import Testing

/// A quarantine whose commit fails (issue 35): the worker ends before it runs anything, and its
/// next process finishes the quarantine from the crash count the store kept, before recovery
/// brings the machine back, so the event that crashed the worker twice never runs a third time.
/// A real worker runtime and coordinator in one process (`InMemoryWorker`), its wall clock a
/// `TestClock` that fixes the times the store is given.
@Suite(.timeLimit(.minutes(2)))
struct QuarantineFailureTests {
    /// 2023-11-14T22:13:20.250Z.
    static let wallMs: Int64 = 1_700_000_000_250

    static func worker(_ store: StoreSession, died: Bool) throws -> InMemoryWorker {
        let log = MemoryFlightLog()
        let poison = PoisonEventTests.poison
        if died { log.begin(address: "ledger", event: Array(poison.dropFirst()), binary: poison[0] == 1, origin: .sent) }
        var configuration = WorkerConfiguration()
        configuration.register(LedgerMachine.self)
        return try InMemoryWorker(name: "w", configuration: configuration, openStore: { store }, flightLog: log,
                                  clock: TestClock(now: Timestamp(sinceEpoch: .milliseconds(wallMs))))
    }

    @Test func aQuarantineThatIsNotStoredEndsTheWorkerAndTheNextStartFinishesIt() async throws {
        let store = StoreSession(MemoryMachineStore())
        var before = StoreCommit()
        let stored = try PoisonEventTests.record("ledger", total: 5, queued: [.add(13), .add(1)])
        before.records = [stored]
        try store.commit(before)
        #expect(try store.countCrash(of: "ledger", event: PoisonEventTests.poison, at: 0) == 1) // the first death

        // The second death: the quarantine's commit fails.
        store.failing.store(true, ordering: .relaxed)
        let cluster = InMemoryCluster(topology: PoisonEventTests.topology)
        let first = try Self.worker(store, died: true)
        try await PoisonEventTests.started(first, in: cluster)
        first.stop()
        #expect(first.exits.first == .quarantineUnwritten(worker: "w", address: "ledger", "database is locked (test)"), "\(first.exits)")
        #expect(first.exits.first?.status == .storage)
        // Nothing of it was stored: the record still holds the event, the count stays at two,
        // stamped by the worker's clock.
        #expect(try store.records() == [stored])
        #expect(try store.deadLetters().isEmpty)
        #expect(try store.crashes().map(\.count) == [2])
        #expect(try store.crashes().map(\.time) == [Self.wallMs])

        // The next process (the store works again) died running nothing: the count alone
        // quarantines the event before the record comes back.
        store.failing.store(false, ordering: .relaxed)
        let next = try Self.worker(store, died: false)
        defer { next.stop() }
        let again = InMemoryCluster(topology: PoisonEventTests.topology)
        try await PoisonEventTests.started(next, in: again)
        #expect(next.exits.isEmpty, "\(next.exits)")
        let letters = try store.deadLetters()
        try #require(letters.count == 1)
        #expect([letters[0].binary ? 1 : 2] + letters[0].event == PoisonEventTests.poison)
        #expect(letters[0].crashes == 2 && letters[0].time == Self.wallMs)
        #expect(try store.crashes().isEmpty)
        // Recovery runs what was queued after it (1), never it (13).
        let state = try await PoisonEventTests.request(WireMessage(Header(.get, correlation: 1), address: "ledger"), through: again, to: next)
        #expect(state.text == #"{"total":6}"#)
    }

    @Test func aQuarantineStoredWhoseCountWasNotForgottenIsNotQuarantinedTwice() async throws {
        let store = StoreSession(MemoryMachineStore())
        var before = StoreCommit()
        before.records = [try PoisonEventTests.record("ledger", total: 5, queued: [.add(1)])]
        before.deadLetters = [DeadLetter(address: "ledger", type: "LedgerMachine", event: Array(PoisonEventTests.poison.dropFirst()),
                                         binary: PoisonEventTests.poison[0] == 1, error: "died", crashes: 2, time: 1)]
        try store.commit(before)
        _ = try store.countCrash(of: "ledger", event: PoisonEventTests.poison, at: 0)
        _ = try store.countCrash(of: "ledger", event: PoisonEventTests.poison, at: 0)

        let cluster = InMemoryCluster(topology: PoisonEventTests.topology)
        let worker = try Self.worker(store, died: false)
        defer { worker.stop() }
        try await PoisonEventTests.started(worker, in: cluster)
        #expect(try store.deadLetters().count == 1)
        #expect(try store.crashes().isEmpty)
        let state = try await PoisonEventTests.request(WireMessage(Header(.get, correlation: 1), address: "ledger"), through: cluster, to: worker)
        #expect(state.text == #"{"total":6}"#)
    }
}
