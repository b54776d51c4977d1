@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
import Foundation
import Testing

/// Issue 21, the journal in append order: an idle machine whose old entries hold back space
/// that no other machine needs writes its record when the store asks, which frees them.
@Suite(.timeLimit(.minutes(2)))
struct JournalLaggardTests {
    typealias J = JournalWorkerTests

    @Test func anIdleMachineHoldingBackDeadRowsWritesItsRecordWhenTheStoreAsks() async throws {
        let directory = try StoreFixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try SQLiteMachineStore.open(directory: directory.path, worker: "w", laggardSlack: 4)
        defer { store.close() }
        var configuration = WorkerConfiguration()
        configuration.register(LedgerMachine.self)
        configuration.register(AlarmMachine.self)
        let worker = try InMemoryWorker(name: "w", configuration: configuration, openStore: { store }, flightLog: MemoryFlightLog())
        defer { worker.stop() }
        let cluster = InMemoryCluster(topology: J.topology)
        try await J.start(worker, in: cluster)

        // Its first write is a record (1), its second event is journaled (2), then it is idle.
        #expect(try await J.add(1, to: "ledgers/idle", cluster, worker, correlation: 1) == #"{"total":1}"#)
        #expect(try await J.add(1, to: "ledgers/idle", cluster, worker, correlation: 2) == #"{"total":2}"#)
        #expect(try store.journal(of: "ledgers/idle", after: 1).map(\.sequence) == [2])
        #expect(try store.records().first { $0.address == "ledgers/idle" }?.sequence == 1)

        // A busy machine writes a record every 3 events (snapshotEvery): its rows die behind it.
        var correlation: UInt64 = 10
        for _ in 0..<30 {
            correlation += 1
            _ = try await J.add(1, to: "ledger", cluster, worker, correlation: correlation)
        }
        let freed = cluster.settle(worker) {
            (try? store.records().first { $0.address == "ledgers/idle" }?.sequence) == 2
        }
        #expect(freed, "the idle machine never wrote its record: \(store.journalLaggards(limit: 10))")
        #expect(try store.journal(of: "ledgers/idle", after: 0) == [])
        #expect(store.journalLaggards(limit: 10) == [])
        #expect(try await J.add(1, to: "ledgers/idle", cluster, worker, correlation: 99) == #"{"total":3}"#)
    }
}
