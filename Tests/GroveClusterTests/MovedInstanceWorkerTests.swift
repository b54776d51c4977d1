@testable import GroveCluster
@testable import GroveCoordinator
@testable import GroveWorker
import GroveRuntime
@_spi(GroveInternal) import GroveWire
import Synchronization
import Testing

/// A real worker runtime whose shared store refuses some of its machines as another worker's
/// (handoff, issue 37): the turn's other writes land, the refused instances' replies become
/// `unavailable`, and the worker serves on. No socket, no PostgreSQL (``RefusingStore``).
@Suite(.timeLimit(.minutes(2)))
struct MovedInstanceWorkerTests {
    static let topology = Topology(
        name: "moved",
        coordinator: .init(clients: "inproc://clients", workers: "inproc://workers", events: "inproc://events"),
        workers: [.init(name: "w")],
        machines: [.init(name: "tallies", type: "TallyMachine", worker: "w", keyed: true, durability: .state)],
        heartbeat: .init(intervalMs: 50, timeoutMs: 200)
    )

    /// An in-memory store that refuses, as PostgreSQL's `GR002` does, every commit that writes
    /// an address another worker "owns", naming all of them; nothing of a refused commit lands.
    final class RefusingStore: MachineStore {
        let stored = MemoryMachineStore()
        let owned = Mutex<Set<String>>([])
        let refusals = Mutex(0)
        /// The records of each commit that landed, by address.
        let landed = Mutex<[[String]]>([])

        func records() throws(StoreError) -> [MachineRecord] { try stored.records() }
        func journal(of address: String, after sequence: UInt64) throws(StoreError) -> [JournalEntry] {
            try stored.journal(of: address, after: sequence)
        }
        func commit(_ commit: StoreCommit) throws(StoreError) {
            let foreign = owned.withLock { $0 }.intersection(commit.records.map(\.address) + commit.journal.map(\.address))
            guard foreign.isEmpty else {
                refusals.withLock { $0 += 1 }
                var refusal = StoreError("cannot write \(foreign.sorted()) (owned by w2)", code: .rejected)
                refusal.refused = foreign.sorted()
                throw refusal
            }
            try stored.commit(commit)
            landed.withLock { $0.append(commit.records.map(\.address).sorted()) }
        }
        func answers(of address: String) throws(StoreError) -> [AnswerEntry] { try stored.answers(of: address) }
        func deadLetters() throws(StoreError) -> [DeadLetter] { try stored.deadLetters() }
        func removeDeadLetter(_ id: Int64) throws(StoreError) -> DeadLetter? { try stored.removeDeadLetter(id) }
        func countCrash(of address: String, event identity: [UInt8], at time: Int64) throws(StoreError) -> Int {
            try stored.countCrash(of: address, event: identity, at: time)
        }
        func forgetCrashes(of address: String, event identity: [UInt8]) throws(StoreError) {
            try stored.forgetCrashes(of: address, event: identity)
        }
        func crashes() throws(StoreError) -> [CrashCount] { try stored.crashes() }
    }

    @Test func aRefusedInstanceAnswersUnavailableAndTheRestOfTheTurnIsCommitted() async throws {
        let cluster = InMemoryCluster(topology: Self.topology)
        let store = RefusingStore()
        var configuration = WorkerConfiguration()
        configuration.register(TallyMachine.self)
        let worker = try InMemoryWorker(name: "w", configuration: configuration, openStore: { store })
        worker.start()
        try #require(cluster.settle(worker) { worker.isWelcomed }, "\(cluster.warnings)")

        // Both run here first: their records are this worker's.
        cluster.fromClients([("c", .event("tallies/x", correlation: 1)), ("c", .event("tallies/y", correlation: 2))])
        var replies: [WireMessage] = []
        try #require(cluster.settle(worker) { replies += cluster.toClient("c"); return replies.count >= 2 })

        // Another worker adopts x; the next turn writes x and y.
        store.owned.withLock { $0 = ["tallies/x"] }
        cluster.fromClients([("c", .event("tallies/x", correlation: 3)), ("c", .event("tallies/y", correlation: 4))])
        replies = []
        try #require(cluster.settle(worker) { replies += cluster.toClient("c"); return replies.count >= 2 })
        replies.sort { $0.header.correlation < $1.header.correlation }
        #expect(replies.map(\.header.kind) == [.error, .state])
        let refused = try WireJSON.decode(WireError.self, from: replies[0].payload, code: .malformedFrame)
        #expect(refused.code == .unavailable)
        #expect(refused.message.contains("tallies/x moved to another worker"), "\(refused.message)")
        #expect(replies[1].text == #"{"count":2}"#)
        #expect(store.refusals.withLock { $0 } == 1)
        // The turn was committed again without x: y's write landed, x's stored record is the
        // one from before.
        #expect(store.landed.withLock { $0 } == [["tallies/x", "tallies/y"], ["tallies/y"]])
        #expect(try store.records().map(\.address) == ["tallies/x", "tallies/y"])
        #expect(worker.exits.isEmpty, "\(worker.exits)")

        // The worker serves on: y keeps counting.
        cluster.fromClients([("c", .event("tallies/y", correlation: 5))])
        replies = []
        try #require(cluster.settle(worker) { replies += cluster.toClient("c"); return !replies.isEmpty })
        #expect(replies.map(\.text) == [#"{"count":3}"#])
        #expect(worker.exits.isEmpty)
    }
}
