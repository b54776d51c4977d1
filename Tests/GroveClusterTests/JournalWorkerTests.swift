@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
import Foundation
import Grove
import GroveRuntime
import GroveWire
import GroveTesting
import Synchronization
import Testing

/// `journal` machines across a worker's restart, with a real worker runtime and coordinator in
/// one process (`InMemoryWorker`) and a store that outlives the worker (`MemoryMachineStore`,
/// which refuses a journal entry written twice).
@Suite(.timeLimit(.minutes(2)))
struct JournalWorkerTests {
    static let topology = Topology.durableWorker("journal", machines: [
        .init(name: "ledger", type: "LedgerMachine", worker: "w", durability: .journal),
        .init(name: "ledgers", type: "LedgerMachine", worker: "w", keyed: true, durability: .journal),
        .init(name: "alarm", type: "AlarmMachine", worker: "w", durability: .journal),
    ])

    /// A worker on `store`, cut off from it when killed (what its machines still run in this
    /// test process never reaches the store, as nothing of a killed process would); its flight
    /// log left by a process that died replaying `died` on `ledger`, when given.
    static func worker(_ store: any MachineStore, died: [UInt8]? = nil,
                       clock: any HostClock = WallClock()) throws -> (worker: InMemoryWorker, kill: () -> Void) {
        let log = MemoryFlightLog()
        if let died { log.begin(address: "ledger", event: Array(died.dropFirst()), binary: died[0] == 1, origin: .journal) }
        var configuration = WorkerConfiguration()
        configuration.register(LedgerMachine.self)
        configuration.register(AlarmMachine.self)
        let session = StoreSession(store)
        let worker = try InMemoryWorker(name: "w", configuration: configuration, openStore: { session }, flightLog: log, clock: clock)
        return (worker, {
            worker.stop()
            session.revoke()
        })
    }

    /// Starts `worker` and waits until it answers a `get` of `ledger`: a registration it sent
    /// twice while the test was slow to pump answers requests in between `worker-lost`.
    static func start(_ worker: InMemoryWorker, in cluster: InMemoryCluster) async throws {
        worker.start()
        try await PoisonEventTests.started(worker, in: cluster)
        for correlation in UInt64(1000)..<1100 {
            let reply = try await PoisonEventTests.request(WireMessage(Header(.get, correlation: correlation), address: "ledger"),
                                                           through: cluster, to: worker)
            if reply.header.kind == .state { return }
        }
        Issue.record("worker \(worker.name) never answered a get: \(cluster.warnings)")
    }

    static func add(_ amount: Int, to address: String, _ cluster: InMemoryCluster, _ worker: InMemoryWorker,
                    correlation: UInt64, observing check: () -> Void = {}) async throws -> String {
        cluster.fromClient("c", .event(address, #"{"add":{"_0":\#(amount)}}"#, correlation: correlation))
        var reply: WireMessage?
        let answered = cluster.settle(worker) {
            if reply == nil, let arrived = cluster.toClient("c").first {
                check()
                reply = arrived
            }
            return reply != nil
        }
        try #require(answered, "no reply to add(\(amount)) for \(address): \(cluster.warnings)")
        return reply?.text ?? ""
    }

    static func journal(_ store: MemoryMachineStore, _ address: String) throws -> [UInt64] {
        try store.journal(of: address, after: 0).map(\.sequence)
    }

    static func recordSequence(_ store: MemoryMachineStore, _ address: String) throws -> UInt64? {
        try store.records().first { $0.address == address }?.sequence
    }

    @Test func eachAcknowledgedEventIsJournaledBeforeItsReplyAndReplayedOnceAfterARestart() async throws {
        let cluster = InMemoryCluster(topology: Self.topology)
        let store = MemoryMachineStore()
        let (first, killFirst) = try Self.worker(store)
        try await Self.start(first, in: cluster)

        // The idle instance was written at its start: a record, which recovery finds it by.
        let idleWritten = cluster.settle(first) { (try? Self.recordSequence(store, "ledger")) == 0 }
        #expect(try idleWritten && Self.journal(store, "ledger") == [])
        // Events 1 and 2: appended, each in the store when its reply arrives.
        #expect(try await Self.add(1, to: "ledger", cluster, first, correlation: 1) == #"{"total":1}"#)
        var journaledWhenAnswered: [UInt64] = []
        let second = try await Self.add(2, to: "ledger", cluster, first, correlation: 2) {
            journaledWhenAnswered = (try? Self.journal(store, "ledger")) ?? []
        }
        #expect(second == #"{"total":3}"#)
        #expect(journaledWhenAnswered == [1, 2])
        #expect(try Self.recordSequence(store, "ledger") == 0)
        // Event 3: three since the record (snapshotEvery 3): the record, through 3, replaces them.
        #expect(try await Self.add(3, to: "ledger", cluster, first, correlation: 3) == #"{"total":6}"#)
        #expect(try Self.recordSequence(store, "ledger") == 3 && Self.journal(store, "ledger") == [])
        #expect(try await Self.add(4, to: "ledger", cluster, first, correlation: 4) == #"{"total":10}"#)
        #expect(try await Self.add(5, to: "ledger", cluster, first, correlation: 5) == #"{"total":15}"#)
        // A keyed instance's first write is its record too.
        #expect(try await Self.add(7, to: "ledgers/x", cluster, first, correlation: 6) == #"{"total":7}"#)
        #expect(try await Self.add(8, to: "ledgers/x", cluster, first, correlation: 7) == #"{"total":15}"#)
        #expect(try Self.recordSequence(store, "ledger") == 3 && Self.journal(store, "ledger") == [4, 5])
        #expect(try Self.recordSequence(store, "ledgers/x") == 1 && Self.journal(store, "ledgers/x") == [2])
        killFirst()

        let (restarted, killRestarted) = try Self.worker(store)
        defer { killRestarted() }
        try await Self.start(restarted, in: cluster)
        // The record (6) with events 4 and 5 replayed once: 15; the keyed instance's too (7 + 8).
        #expect(try await Self.add(100, to: "ledger", cluster, restarted, correlation: 8) == #"{"total":115}"#)
        #expect(try await Self.add(100, to: "ledgers/x", cluster, restarted, correlation: 9) == #"{"total":115}"#)
        // Sequences go on from the replayed ones (the store refuses an entry written twice).
        #expect(try await Self.add(1, to: "ledger", cluster, restarted, correlation: 10) == #"{"total":116}"#)
        #expect(try Self.journal(store, "ledger").suffix(2) == [6, 7])
        #expect(try Self.recordSequence(store, "ledgers/x") == 1 && Self.journal(store, "ledgers/x") == [2, 3])
    }

    @Test func aTimerThatRangIsJournaledAndDoesNotRingAgainAfterARestart() async throws {
        let cluster = InMemoryCluster(topology: Self.topology)
        let store = MemoryMachineStore()
        let clock = TestClock()
        let (first, killFirst) = try Self.worker(store, clock: clock)
        try await Self.start(first, in: cluster)
        cluster.fromClient("c", .event("alarm", #"{"arm":{"milliseconds":20}}"#, correlation: 1))
        try #require(cluster.settle(first) { !cluster.toClient("c").isEmpty })
        // A pending timer: the whole snapshot with it, not an entry.
        #expect(try store.records().first { $0.address == "alarm" }?.snapshot.first == 1)
        // The ring, once it came, is journaled on that record (the alarm then holds only its state).
        await clock.advance(by: .milliseconds(20))
        let journaled = cluster.settle(first) { ((try? Self.journal(store, "alarm")) ?? []) == [2] }
        #expect(journaled, "\((try? Self.journal(store, "alarm")) ?? [])")
        killFirst()

        let (second, killSecond) = try Self.worker(store, clock: clock)
        defer { killSecond() }
        try await Self.start(second, in: cluster)
        cluster.fromClient("c", .event("alarm", #""peek""#, correlation: 2))
        var reply: WireMessage?
        let answered = cluster.settle(second) {
            reply = reply ?? cluster.toClient("c").first
            return reply != nil
        }
        try #require(answered, "\(cluster.warnings)")
        #expect(reply?.text == #"{"armed":false,"rang":1}"#)
        // The record's timer is not brought back: it rang, as the journal says.
        struct Timers: @unchecked Sendable { let instance: (any HostedMachine)? }
        let instance = try #require(second.onLoop { Timers(instance: $0.instances["alarm"]) }.instance as? Hosted<AlarmMachine>)
        let host = instance.host
        #expect(second.onLoop { _ in host.onOwnExecutor { $0.snapshot() } }.timers.isEmpty)
    }

    @Test func aJournaledEventThatCrashesTheReplayTwiceIsQuarantinedAndSkipped() async throws {
        let cluster = InMemoryCluster(topology: Self.topology)
        let store = MemoryMachineStore()
        let poison = PoisonEventTests.poison // add(13)
        var before = StoreCommit()
        var record = try PoisonEventTests.record("ledger", total: 5)
        record.sequence = 2
        before.records = [record]
        before.journal = [JournalEntry(address: "ledger", sequence: 3, event: PoisonEventTests.identity(.add(1)), time: 0),
                          JournalEntry(address: "ledger", sequence: 4, event: poison, time: 0),
                          JournalEntry(address: "ledger", sequence: 5, event: PoisonEventTests.identity(.add(2)), time: 0)]
        try store.commit(before)
        #expect(try store.countCrash(of: "ledger", event: poison, at: 0) == 1) // the first death, counted by the last start
        let (worker, kill) = try Self.worker(store, died: poison)
        defer { kill() }
        worker.start()
        try await PoisonEventTests.started(worker, in: cluster)

        let letters = try store.deadLetters()
        try #require(letters.count == 1, "\(letters)")
        #expect([letters[0].binary ? 1 : 2] + letters[0].event == poison)
        #expect(letters[0].error.contains("journaled event"), "\(letters[0].error)")
        // The state before it (5 + 1) at its sequence; the entry after it replayed (+ 2).
        #expect(try Self.recordSequence(store, "ledger") == 4 && Self.journal(store, "ledger") == [5])
        #expect(try await PoisonEventTests.request(WireMessage(Header(.get, correlation: 1), address: "ledger"), through: cluster,
                                                   to: worker).text == #"{"total":8}"#)
    }
}

/// One worker's use of a store that outlives it: cut off when the worker is killed (its
/// commits dropped, `revoke()`), or failing as a locked database would while `failing` is set.
final class StoreSession: MachineStore {
    let store: any MachineStore
    private let revoked = Mutex(false)
    let failing = Atomic<Bool>(false)

    init(_ store: any MachineStore) { self.store = store }

    func revoke() { revoked.withLock { $0 = true } }

    var label: String { store.label }

    func answers(of address: String) throws(StoreError) -> [AnswerEntry] { try store.answers(of: address) }
    func records() throws(StoreError) -> [MachineRecord] { try store.records() }
    func journal(of address: String, after sequence: UInt64) throws(StoreError) -> [JournalEntry] {
        try store.journal(of: address, after: sequence)
    }
    func commit(_ commit: StoreCommit) throws(StoreError) {
        if failing.load(ordering: .relaxed) { throw StoreError("database is locked (test)", code: .failed) }
        guard !revoked.withLock({ $0 }) else { return }
        try store.commit(commit)
    }
    func deadLetters() throws(StoreError) -> [DeadLetter] { try store.deadLetters() }
    func removeDeadLetter(_ id: Int64) throws(StoreError) -> DeadLetter? { try store.removeDeadLetter(id) }
    func countCrash(of address: String, event identity: [UInt8], at time: Int64) throws(StoreError) -> Int {
        try store.countCrash(of: address, event: identity, at: time)
    }
    func forgetCrashes(of address: String, event identity: [UInt8]) throws(StoreError) {
        try store.forgetCrashes(of: address, event: identity)
    }
    func crashes() throws(StoreError) -> [CrashCount] { try store.crashes() }
}

extension JournalWorkerTests {
    /// A journal entry whose codec byte changed in the store refuses its instance only, with an
    /// error naming it and the entry; the record and journal stay as they were, and the
    /// worker's other instances are replayed and served.
    @Test func aJournalEntryThatDoesNotReadRefusesItsInstanceOnly() async throws {
        let cluster = InMemoryCluster(topology: Self.topology)
        let store = MemoryMachineStore()
        let (first, killFirst) = try Self.worker(store)
        try await Self.start(first, in: cluster)
        #expect(try await Self.add(7, to: "ledgers/x", cluster, first, correlation: 1) == #"{"total":7}"#)
        #expect(try await Self.add(8, to: "ledgers/x", cluster, first, correlation: 2) == #"{"total":15}"#)
        #expect(try await Self.add(1, to: "ledger", cluster, first, correlation: 3) == #"{"total":1}"#)
        killFirst()
        // Entry 2 of ledgers/x written again with an unknown codec byte (the store refuses an
        // entry written twice: removed first, then record and journal as they were).
        let record = try #require(try store.record(of: "ledgers/x"))
        var entries = try store.journal(of: "ledgers/x", after: record.sequence)
        try #require(entries.map(\.sequence) == [2])
        entries[0].event[0] = 0xE7
        var removing = StoreCommit()
        removing.removed = ["ledgers/x"]
        try store.commit(removing)
        var corrupting = StoreCommit()
        corrupting.records = [record]
        corrupting.journal = entries
        try store.commit(corrupting)

        let (restarted, killRestarted) = try Self.worker(store)
        defer { killRestarted() }
        try await Self.start(restarted, in: cluster)
        #expect(try await Self.add(100, to: "ledger", cluster, restarted, correlation: 4) == #"{"total":101}"#)
        for correlation: UInt64 in [5, 6] {
            let reply = try await Self.add(100, to: "ledgers/x", cluster, restarted, correlation: correlation)
            let error = try WireJSON.decode(WireError.self, from: Array(reply.utf8))
            #expect(error.code == .unreadableRecord && error.address == "ledgers/x", "\(reply)")
            #expect(error.message.contains("journal entry 2 of 'ledgers/x' starts with an unknown codec byte"), "\(error.message)")
        }
        #expect(try store.record(of: "ledgers/x") == record)
        #expect(try store.journal(of: "ledgers/x", after: record.sequence) == entries)
    }
}
