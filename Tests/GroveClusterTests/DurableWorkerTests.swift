@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
import Grove
import GroveRuntime
import GroveTesting
import GroveWire
import Synchronization
import Testing

/// Durable machines across a worker's restart, with a real worker runtime and coordinator in one
/// process (`InMemoryWorker`) and a store that outlives the worker (`RememberingStore`).
@Suite(.timeLimit(.minutes(2)))
struct DurableWorkerTests {
    static let topology = Topology(
        name: "durable",
        coordinator: .init(clients: "inproc://clients", workers: "inproc://workers", events: "inproc://events"),
        workers: [.init(name: "w")],
        machines: [.init(name: "tally", type: "TallyMachine", worker: "w", durability: .state),
                   .init(name: "tallies", type: "TallyMachine", worker: "w", keyed: true, durability: .state),
                   .init(name: "scratch", type: "TallyMachine", worker: "w"),
                   .init(name: "alarm", type: "AlarmMachine", worker: "w", durability: .state)],
        heartbeat: .init(intervalMs: 50, timeoutMs: 200)
    )

    /// A worker on `store`; what its machines still run after it stopped (their tasks outlive
    /// its loop in one test process) never reaches the store, as nothing of a killed process would.
    private static func worker(_ store: RememberingStore, clock: any HostClock = WallClock()) throws -> (worker: InMemoryWorker, kill: () -> Void) {
        var configuration = WorkerConfiguration()
        configuration.register(TallyMachine.self)
        configuration.register(AlarmMachine.self)
        let session = RememberingStore.Session(store)
        let worker = try InMemoryWorker(name: "w", configuration: configuration, openStore: { session }, clock: clock)
        return (worker, {
            worker.stop()
            session.revoke()
        })
    }

    /// Pumps until `worker` was welcomed (the coordinator's readiness would still count an
    /// earlier worker of the same name).
    private static func welcome(_ worker: InMemoryWorker, in cluster: InMemoryCluster) -> Bool {
        cluster.settle(worker) { worker.isWelcomed }
    }

    /// Sends `events` (address, correlation) as one turn of client "c" and returns the replies.
    private static func send(_ events: [(String, UInt64)], through cluster: InMemoryCluster, to worker: InMemoryWorker,
                             observing check: () -> Void = {}) async throws -> [WireMessage] {
        cluster.fromClients(events.map { ("c", .event($0.0, correlation: $0.1)) })
        var replies: [WireMessage] = []
        let answered = cluster.settle(worker) {
            let arrived = cluster.toClient("c")
            if !arrived.isEmpty { check() }
            replies += arrived
            return replies.count >= events.count
        }
        try #require(answered, "\(replies.count) replies of \(events.count): \(cluster.warnings)")
        // In order per machine; across machines, as each ran.
        return replies.sorted { $0.header.correlation < $1.header.correlation }
    }

    private static func count(_ reply: WireMessage) throws -> Int {
        try WireJSON.decode(TallyMachine.State.self, from: reply.payload).count
    }

    @Test func aRestartedWorkerBringsBackItsDurableMachinesAndForgetsTheOthers() async throws {
        let cluster = InMemoryCluster(topology: Self.topology)
        let store = RememberingStore()
        let (first, killFirst) = try Self.worker(store)
        first.start()
        try #require(Self.welcome(first, in: cluster), "\(cluster.warnings)")

        var storedWhenAnswered: [String: Int] = [:]
        let replies = try await Self.send([("tally", 1), ("tally", 2), ("tally", 3), ("tallies/x", 4), ("scratch", 5)],
                                          through: cluster, to: first) {
            storedWhenAnswered = store.counts()
        }
        #expect(replies.map(\.text) == ["{\"count\":1}", "{\"count\":2}", "{\"count\":3}", "{\"count\":1}", "{\"count\":1}"])
        // The replies left after the commit: the first one seen found every state stored.
        #expect(storedWhenAnswered == ["tally": 3, "tallies/x": 1], "scratch is not durable; stored: \(storedWhenAnswered)")
        // Nothing but a state: written as the state alone, no snapshot built.
        let codecs = try store.records().map { $0.snapshot.first }
        #expect(codecs == Array(repeating: DurableRecord.stateAloneCodec, count: 3), "tally, tallies/x, the idle alarm: \(codecs)")
        killFirst()

        let (second, killSecond) = try Self.worker(store)
        defer { killSecond() }
        second.start()
        try #require(Self.welcome(second, in: cluster), "\(cluster.warnings)")
        let after = try await Self.send([("tally", 6), ("tallies/x", 7), ("scratch", 8)], through: cluster, to: second)
        #expect(after.map(\.text) == ["{\"count\":4}", "{\"count\":2}", "{\"count\":1}"], "tally and tallies/x continue, scratch starts over")
    }
}

extension DurableWorkerTests {
    /// A record whose codec byte is unknown, and one whose bytes do not decode: each instance
    /// is refused with an error naming it and the store, and never started afresh over its
    /// record, which stays as it is; the worker's other machines are served.
    @Test func aRecordThatDoesNotReadRefusesItsInstanceOnlyAndIsLeftAsItIs() async throws {
        let cluster = InMemoryCluster(topology: Self.topology)
        let store = RememberingStore()
        let (first, killFirst) = try Self.worker(store)
        first.start()
        try #require(Self.welcome(first, in: cluster), "\(cluster.warnings)")
        _ = try await Self.send([("tally", 1), ("tally", 2), ("tallies/x", 3), ("tallies/y", 4)], through: cluster, to: first)
        killFirst()
        var stored = Dictionary(uniqueKeysWithValues: try store.records().map { ($0.address, $0) })
        var badByte = try #require(stored["tally"])
        badByte.snapshot[0] = 0xE7
        var badBytes = try #require(stored["tallies/x"])
        badBytes.snapshot = [badBytes.snapshot[0], 0xFF, 0xFF, 0xFF]
        var corrupting = StoreCommit()
        corrupting.records = [badByte, badBytes]
        try store.commit(corrupting)
        stored = Dictionary(uniqueKeysWithValues: try store.records().map { ($0.address, $0) })

        let (second, killSecond) = try Self.worker(store)
        defer { killSecond() }
        second.start()
        try #require(Self.welcome(second, in: cluster), "\(cluster.warnings)")
        let replies = try await Self.send([("tally", 5), ("tallies/x", 6), ("tallies/y", 7), ("scratch", 8), ("tally", 9)],
                                          through: cluster, to: second)
        #expect(replies[2].text == #"{"count":2}"#, "tallies/y continues")
        #expect(replies[3].text == #"{"count":1}"#, "scratch is served")
        for (index, address, what) in [(0, "tally", "unknown codec byte 231"), (1, "tallies/x", "does not decode"), (4, "tally", "unknown codec byte 231")] {
            let reply = replies[index]
            #expect(reply.header.kind == .error, "\(address): \(reply.text)")
            let error = try WireJSON.decode(WireError.self, from: reply.payload)
            #expect(error.code == .unreadableRecord && error.address == address, "\(error)")
            #expect(error.message.contains("cannot read what the worker's store holds for '\(address)'") && error.message.contains(what),
                    "\(error.message)")
            #expect(error.message.contains("Restore the store from a backup"), "\(error.message)")
        }
        // Left as they were: nothing started afresh wrote over them.
        let after = Dictionary(uniqueKeysWithValues: try store.records().map { ($0.address, $0) })
        #expect(after["tally"] == stored["tally"] && after["tallies/x"] == stored["tallies/x"])
        #expect(store.counts()["tallies/y"] == 2)
    }

    @Test func aTimerThatFellDueWhileTheWorkerWasDownFiresOnceWhenItIsBack() async throws {
        let cluster = InMemoryCluster(topology: Self.topology)
        let store = RememberingStore()
        let clock = TestClock()
        let (first, killFirst) = try Self.worker(store, clock: clock)
        first.start()
        try #require(Self.welcome(first, in: cluster), "\(cluster.warnings)")
        cluster.fromClient("c", .event("alarm", #"{"arm":{"milliseconds":300}}"#, correlation: 1))
        let armed = cluster.settle(first) { !cluster.toClient("c").isEmpty }
        try #require(armed)
        // A pending timer: the whole snapshot is written (codec 1), not the state alone.
        #expect(try store.records().first { $0.address == "alarm" }?.snapshot.first == 1)
        killFirst() // before the alarm is due
        // The worker is down when it falls due: what the killed worker had armed wakes a loop
        // nobody runs any more, as nothing of a killed process runs.
        await clock.advance(by: .milliseconds(400))

        let (second, killSecond) = try Self.worker(store, clock: clock)
        defer { killSecond() }
        second.start()
        try #require(Self.welcome(second, in: cluster), "\(cluster.warnings)")
        // Peeks until the restored alarm rang: once, never twice.
        var last: String?
        var waiting = false
        var correlation: UInt64 = 1
        // The restored timer, past its deadline, is armed to fire at once: the clock's next move.
        await clock.advance(by: .zero)
        let rang = cluster.settle(second) {
            if let reply = cluster.toClient("c").last {
                last = reply.text
                waiting = false
            }
            if let last, last != #"{"armed":true,"rang":0}"# { return true }
            if !waiting {
                correlation += 1
                cluster.fromClient("c", .event("alarm", #""peek""#, correlation: correlation))
                waiting = true
            }
            return false
        }
        #expect(rang, "the restored alarm never rang")
        #expect(last == #"{"armed":false,"rang":1}"#)
    }
}

/// Arms one timer at a time; counts how often it rang.
enum AlarmMachine: Machine {
    enum Event: Codable, Sendable {
        case arm(milliseconds: Int)
        case ring
        case peek
    }

    struct State: Codable, Sendable, Equatable {
        var armed = false
        var rang = 0
    }

    static var initialState: State { State() }

    static func update(_ state: inout State, event: Event) -> Effect {
        switch event {
        case .arm(let milliseconds):
            state.armed = true
            return .after(.milliseconds(milliseconds), id: "alarm", send: .ring)
        case .ring:
            state.armed = false
            state.rang += 1
            return .none
        case .peek:
            return .none
        }
    }
}

/// A store that outlives the workers that use it: what a database file is to worker processes.
final class RememberingStore: StoreWithoutPoison {
    private let stored = Mutex<[String: MachineRecord]>([:])

    /// The stored tally of each address.
    func counts() -> [String: Int] {
        stored.withLock { records in
            records.compactMapValues { record in
                (try? DurableRecord.decode(record.snapshot, as: TallyMachine.self))?.state.count
            }
        }
    }

    /// One worker's use of the store, cut off when the worker is killed.
    final class Session: StoreWithoutPoison {
        let store: RememberingStore
        private let revoked = Mutex(false)

        init(_ store: RememberingStore) { self.store = store }

        func revoke() { revoked.withLock { $0 = true } }

        func records() throws(StoreError) -> [MachineRecord] { try store.records() }
        func journal(of address: String, after sequence: UInt64) throws(StoreError) -> [JournalEntry] { [] }
        func commit(_ commit: StoreCommit) throws(StoreError) {
            guard !revoked.withLock({ $0 }) else { return }
            try store.commit(commit)
        }
    }

    func records() throws(StoreError) -> [MachineRecord] { stored.withLock { Array($0.values) } }
    func journal(of address: String, after sequence: UInt64) throws(StoreError) -> [JournalEntry] { [] }
    func commit(_ commit: StoreCommit) throws(StoreError) {
        stored.withLock { records in
            for record in commit.records { records[record.address] = record }
            for address in commit.removed { records[address] = nil }
        }
    }
}
