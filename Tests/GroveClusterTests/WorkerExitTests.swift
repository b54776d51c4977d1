import Foundation
@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
import GroveWire
import Synchronization
import Testing

/// Why a worker ends by itself, and with which status: the one list (``WorkerExitStatus``) that
/// the supervisor's defaults and `--help` read, and the runtime's exits on a store or an audit
/// log that fails, with a real worker runtime and coordinator in one process (`InMemoryWorker`,
/// which keeps the reason instead of exiting).
@Suite(.timeLimit(.minutes(2)))
struct WorkerExitTests {
    static let topology = Topology.durableWorker("exits", machines: [
        .init(name: "ledger", type: "LedgerMachine", worker: "w", durability: .journal),
        .init(name: "scratch", type: "LedgerMachine", worker: "w"),
    ])

    /// A store that fails the operations a test names, and otherwise keeps what it is given.
    final class FailingStore: StoreWithoutPoison {
        enum Operation: Sendable { case records, journal, commit }
        let store = MemoryMachineStore()
        let failing = Mutex<Set<Operation>>([])

        private func check(_ operation: Operation) throws(StoreError) {
            if failing.withLock({ $0.contains(operation) }) { throw StoreError("disk I/O error (test)", code: .failed) }
        }

        func records() throws(StoreError) -> [MachineRecord] {
            try check(.records)
            return try store.records()
        }
        func journal(of address: String, after sequence: UInt64) throws(StoreError) -> [JournalEntry] {
            try check(.journal)
            return try store.journal(of: address, after: sequence)
        }
        func commit(_ commit: StoreCommit) throws(StoreError) {
            try check(.commit)
            try store.commit(commit)
        }
    }

    static func worker(opening store: (@Sendable () throws(StoreError) -> any MachineStore)?) throws -> InMemoryWorker {
        var configuration = WorkerConfiguration()
        configuration.register(LedgerMachine.self)
        return try InMemoryWorker(name: "w", configuration: configuration, openStore: store)
    }

    /// Pumps until the worker decided to end, at most 10 s; its reasons.
    static func exits(of worker: InMemoryWorker, in cluster: InMemoryCluster) async throws -> [WorkerExitReason] {
        cluster.settle(worker, until: { !worker.exits.isEmpty })
        return worker.exits
    }

    @Test func theFinalStatusesAreTheSupervisorsDefault() {
        #expect(WorkerExitStatus.final == [2, 64, 78])
        #expect(Topology.Supervision().finalExitCodes == WorkerExitStatus.final)
        #expect(WorkerExitStatus.storage.rawValue == 74 && !WorkerExitStatus.storage.isFinal,
                "restarted: the store holds everything acknowledged")
    }

    @Test func aRefusalOrAMissingSettingIsFinalAndAFailingDiskIsNot() {
        let final: [WorkerExitReason] = [.rejected("r"), .superseded("s"), .noDataDirectory(worker: "w"),
                                         .storeUnusable(worker: "w", "x"), .auditLogUnusable(worker: "w", "x")]
        let restarted: [WorkerExitReason] = [.journalUnreadable(worker: "w", address: "a", "x"),
                                             .storeWriteFailed(worker: "w", "x"), .auditWriteFailed(worker: "w", "x")]
        for reason in final { #expect(reason.status == .configuration, "\(reason)") }
        for reason in restarted { #expect(reason.status == .storage, "\(reason)") }
    }

    @Test func helpListsEveryStatus() {
        for status in WorkerExitStatus.allCases {
            #expect(WorkerExitStatus.help.contains("  \(status.rawValue)  \(status.summary)"), "\(status)")
        }
        #expect(Worker.WorkerUsageError(message: "").description.contains(WorkerExitStatus.help))
    }

    @Test func durableMachinesWithoutADataDirectoryEndTheWorkerForGood() async throws {
        let worker = try Self.worker(opening: nil)
        defer { worker.stop() }
        let cluster = InMemoryCluster(topology: Self.topology)
        worker.start()
        let exits = try await Self.exits(of: worker, in: cluster)
        #expect(exits.first == .noDataDirectory(worker: "w"))
        #expect(exits.first?.message.contains("start it with --data-dir") == true)
    }

    @Test func aStoreThatCannotBeReadEndsTheWorkerForGood() async throws {
        let store = FailingStore()
        store.failing.withLock { $0 = [.records] }
        let worker = try Self.worker(opening: { store })
        defer { worker.stop() }
        let cluster = InMemoryCluster(topology: Self.topology)
        worker.start()
        let exits = try await Self.exits(of: worker, in: cluster)
        #expect(exits.first == .storeUnusable(worker: "w", "disk I/O error (test)"))
        #expect(exits.first?.status == .configuration)
    }

    @Test func aCommitThatFailsEndsTheWorkerToBeRestarted() async throws {
        let store = FailingStore()
        let worker = try Self.worker(opening: { store })
        defer { worker.stop() }
        let cluster = InMemoryCluster(topology: Self.topology)
        try await PoisonEventTests.started(worker, in: cluster)
        #expect(worker.exits.isEmpty)

        store.failing.withLock { $0 = [.commit] }
        cluster.fromClient("c", .event("ledger", #"{"add":{"_0":5}}"#, correlation: 1))
        let exits = try await Self.exits(of: worker, in: cluster)
        #expect(exits.first == .storeWriteFailed(worker: "w", "disk I/O error (test)"))
        #expect(exits.first?.status == .storage)
    }

    @Test func aJournalThatCannotBeReadEndsTheWorkerToBeRestarted() async throws {
        let store = FailingStore()
        do {
            let first = try Self.worker(opening: { store })
            let cluster = InMemoryCluster(topology: Self.topology)
            try await PoisonEventTests.started(first, in: cluster)
            let reply = try await JournalWorkerTests.add(5, to: "ledger", cluster, first, correlation: 1)
            #expect(reply == #"{"total":5}"#)
            first.stop()
        }
        try #require(try store.store.records().contains { $0.address == "ledger" }, "the first worker left a record")

        store.failing.withLock { $0 = [.journal] }
        let second = try Self.worker(opening: { store })
        defer { second.stop() }
        let cluster = InMemoryCluster(topology: Self.topology)
        second.start()
        let exits = try await Self.exits(of: second, in: cluster)
        #expect(exits.first == .journalUnreadable(worker: "w", address: "ledger", "disk I/O error (test)"))
        #expect(exits.first?.status == .storage)
    }

    @Test func anAuditLogThatCannotBeOpenedEndsTheWorkerForGood() async throws {
        let directory = AuditLineTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let file = directory + "/not-a-directory"
        try #require(FileManager.default.createFile(atPath: file, contents: Data()))
        var configuration = WorkerConfiguration()
        configuration.register(LedgerMachine.self)
        let worker = try InMemoryWorker(name: "w", configuration: configuration)
        defer { worker.stop() }
        // A directory below a regular file: refused whoever runs the test, root included.
        worker.onLoop { $0.turn.audit.use(directory: file + "/audit") }
        let cluster = InMemoryCluster(topology: Topology.durableWorker("audited", machines: [
            .init(name: "scratch", type: "LedgerMachine", worker: "w", audit: true),
        ]))
        worker.start()
        let exits = try await Self.exits(of: worker, in: cluster)
        guard case .auditLogUnusable(let name, let why) = exits.first else {
            Issue.record("expected the audit log to end the worker, got \(exits)")
            return
        }
        #expect(name == "w")
        #expect(why.contains(file), "names the path: \(why)")
        #expect(exits.first?.status == .configuration)
    }
}
