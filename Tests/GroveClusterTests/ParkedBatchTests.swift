@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
import Foundation
import GroveWire
import Logging
import Testing

/// A worker still bringing its stored instances back, asked for several of them by one batch,
/// with a real worker runtime and coordinator in one process (`InMemoryWorker`).
@Suite(.timeLimit(.minutes(2)))
struct ParkedBatchTests {
    /// Each turn may bring instances back on demand for no time at all (`recoveryTurn: .zero`),
    /// so every event for an instance still waiting ends its turn and leaves the rest of the
    /// batch for the next: the replies still come in the batch's order, each event applied once.
    @Test func aBatchAskingForWaitingInstancesIsDecidedInOrderOverSeveralTurns() async throws {
        let store = MemoryMachineStore()
        var stored = StoreCommit()
        // 300 ledgers, brought back one per turn (the last address first: ledgers/0, 1 and 2
        // come after some 200 others).
        stored.records = try (0..<300).map { try PoisonEventTests.record("ledgers/\($0)", total: $0 * 100) }
        try store.commit(stored)
        let log = WarningLog(level: .notice)
        var configuration = WorkerConfiguration()
        configuration.register(LedgerMachine.self)
        configuration.register(AlarmMachine.self)
        let worker = try InMemoryWorker(name: "w", configuration: configuration, openStore: { store },
                                        log: Logger(label: "grove.worker.parked") { _ in log }, recoveryTurn: .zero)
        defer { worker.stop() }
        let cluster = InMemoryCluster(topology: JournalWorkerTests.topology)
        try await PoisonEventTests.started(worker, in: cluster)

        // One batch: 1 to each of three waiting ledgers, then 10 to each.
        let events = [(0, 1), (1, 1), (2, 1), (0, 10), (1, 10), (2, 10)]
        cluster.fromClient("c", batch: events.enumerated().map { index, event in
            .event("ledgers/\(event.0)", #"{"add":{"_0":\#(event.1)}}"#, correlation: UInt64(index + 1))
        })
        var replies: [UInt64: String] = [:]
        let answered = cluster.settle(worker) {
            for reply in cluster.toClient("c") {
                // Replies of a client's batch come back in batches.
                let unbatched = reply.header.kind == .batch
                    ? ((try? Batch.envelopes(in: reply.payload).map { try $0.message(in: reply.payload) }) ?? []) : [reply]
                for message in unbatched { replies[message.header.correlation] = message.text }
            }
            return replies.count == events.count
        }
        try #require(answered, "replies: \(replies); \(cluster.warnings)")
        #expect(replies == [1: #"{"total":1}"#, 2: #"{"total":101}"#, 3: #"{"total":201}"#,
                            4: #"{"total":11}"#, 5: #"{"total":111}"#, 6: #"{"total":211}"#])

        // The three came back early, each in a turn that left the rest of the batch for the next.
        let recovered = cluster.settle(worker) { log.messages.contains { $0.hasPrefix("recovered 300 ") } }
        let notice = log.messages.first { $0.hasPrefix("recovered 300 ") } ?? "none: \(log.messages)"
        #expect(recovered && notice.hasSuffix("; 3 of them asked for by a message before their turn, over 3 turn(s) that left the rest of their messages for the next"),
                "\(notice)")
    }
}
