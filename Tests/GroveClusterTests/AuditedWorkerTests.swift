import Foundation
@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
import Grove
import GroveWire
import Synchronization
import Testing

/// A worker writing its audited machines' transitions, with a real worker runtime and
/// coordinator in one process (`InMemoryWorker`): one line per committed transition, written
/// before the replies leave, after the store's commit for a durable machine, none for machines
/// not audited.
@Suite(.timeLimit(.minutes(2)))
struct AuditedWorkerTests {
    static let topology = Topology(
        name: "audited",
        coordinator: .init(clients: "inproc://clients", workers: "inproc://workers", events: "inproc://events"),
        workers: [.init(name: "w")],
        machines: [.init(name: "tally", type: "TallyMachine", worker: "w", durability: .state, audit: true),
                   .init(name: "tallies", type: "TallyMachine", worker: "w", keyed: true, audit: true),
                   .init(name: "scratch", type: "TallyMachine", worker: "w")],
        heartbeat: .init(intervalMs: 50, timeoutMs: 200)
    )

    /// A store that notes, at each commit, how many lines the audit log has and the tally it
    /// commits.
    final class WatchingStore: StoreWithoutPoison {
        let log: String
        let commits = Mutex<[(lines: Int, tally: Int?)]>([])
        init(log: String) { self.log = log }

        func records() throws(StoreError) -> [MachineRecord] { [] }
        func journal(of address: String, after sequence: UInt64) throws(StoreError) -> [JournalEntry] { [] }
        func commit(_ commit: StoreCommit) throws(StoreError) {
            let lines = ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").count
            let tally = commit.records.first { $0.address == "tally" }
                .flatMap { try? DurableRecord.decode($0.snapshot, as: TallyMachine.self) }?.state.count
            commits.withLock { $0.append((lines, tally)) }
        }
    }

    @Test func auditedTransitionsAreLoggedBeforeTheirRepliesLeaveAndAfterTheirCommit() async throws {
        let directory = AuditLineTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = "\(directory)/w.jsonl"
        let store = WatchingStore(log: path)
        var configuration = WorkerConfiguration()
        configuration.register(TallyMachine.self)
        let worker = try InMemoryWorker(name: "w", configuration: configuration, openStore: { store })
        defer { worker.stop() }
        worker.onLoop { $0.turn.audit.use(directory: directory) }
        let cluster = InMemoryCluster(topology: Self.topology)
        worker.start()
        cluster.settle(worker) { worker.isWelcomed }
        try #require(worker.isWelcomed, "\(cluster.warnings)")

        cluster.fromClients([("c", .event("tally", correlation: 1)), ("c", .event("scratch", correlation: 2)),
                             ("c", .event("tallies/k", correlation: 3)), ("c", .event("tally", correlation: 4))])
        var replies: [WireMessage] = []
        var linesWhenAnswered: [Int] = []
        let answered = cluster.settle(worker) {
            let arrived = cluster.toClient("c")
            if !arrived.isEmpty {
                linesWhenAnswered.append(((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n").count)
            }
            replies += arrived
            return replies.count >= 4
        }
        try #require(answered, "\(replies.count) replies of 4: \(cluster.warnings)")
        let lines = try AuditLineTests.lines(of: path)
        // In order per machine; across machines, as each ran.
        let tally = lines.filter { $0["address"] as? String == "tally" }, keyed = lines.filter { $0["address"] as? String == "tallies/k" }
        #expect(tally.count == 2 && keyed.count == 1 && lines.count == 3, "scratch is not audited: \(lines)")
        #expect(linesWhenAnswered.first == 3, "the replies left before their lines were written: \(linesWhenAnswered)")
        let committed = store.commits.withLock { $0 }.first { $0.tally == 2 }
        #expect(committed?.lines == 0, "tally's lines were written before the commit of its state: \(store.commits.withLock { $0 })")
        let zero = AuditDigest.of(state: TallyMachine.State(count: 0)), one = AuditDigest.of(state: TallyMachine.State(count: 1))
        let two = AuditDigest.of(state: TallyMachine.State(count: 2))
        #expect(tally.map { $0["before"] as? String } == [zero, one] && keyed.map { $0["before"] as? String } == [zero])
        #expect(tally.map { $0["after"] as? String } == [one, two] && keyed.map { $0["after"] as? String } == [one])
        #expect(lines.allSatisfy { $0["worker"] as? String == "w" && $0["origin"] as? String == "sent" && $0["state"] == nil })
        #expect(lines.allSatisfy { ($0["event"] as? [String: Any])?.keys.first == "increment" })
    }
}
