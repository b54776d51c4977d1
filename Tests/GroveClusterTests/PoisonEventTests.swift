@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
import Foundation
import Grove
import GroveRuntime
import GroveWire
import Testing

/// Issue 21, poison events: a real worker runtime and coordinator in one process
/// (`InMemoryWorker`), a store that outlives the worker (`MemoryMachineStore`) and a flight log
/// in memory, on which a test plays a process that died in the middle of an event.
@Suite(.timeLimit(.minutes(2)))
struct PoisonEventTests {
    static let topology = Topology(
        name: "poison",
        coordinator: .init(clients: "inproc://clients", workers: "inproc://workers", events: "inproc://events"),
        workers: [.init(name: "w")],
        machines: [.init(name: "ledger", type: "LedgerMachine", worker: "w", durability: .state),
                   .init(name: "other", type: "LedgerMachine", worker: "w", durability: .state)],
        heartbeat: .init(intervalMs: 50, timeoutMs: 200)
    )

    /// What names `event` in the recorder, the crash counts and the quarantine.
    static func identity(_ event: LedgerMachine.Event) -> [UInt8] {
        var bytes: [UInt8] = [0]
        let binary = HostedPath<LedgerMachine>().encodeEvent(event, &bytes)
        bytes[0] = binary == true ? 1 : 2
        return bytes
    }

    /// `add(13)`, the event the tests blame.
    static let poison = identity(.add(13))

    /// A worker on `store`, its flight log left by a process that died running `add(13)` on
    /// `ledger` when `died`.
    static func worker(_ store: MemoryMachineStore, died: Bool) throws -> InMemoryWorker {
        let log = MemoryFlightLog()
        if died { log.begin(address: "ledger", event: Array(poison.dropFirst()), binary: poison[0] == 1, origin: .sent) }
        var configuration = WorkerConfiguration()
        configuration.register(LedgerMachine.self)
        return try InMemoryWorker(name: "w", configuration: configuration, openStore: { store }, flightLog: log)
    }

    static func started(_ worker: InMemoryWorker, in cluster: InMemoryCluster) async throws {
        worker.start()
        cluster.settle(worker) { worker.isWelcomed }
        try #require(worker.isWelcomed, "\(cluster.warnings)")
    }

    /// Sends `message` as client "c" and returns its reply.
    static func request(_ message: WireMessage, through cluster: InMemoryCluster, to worker: InMemoryWorker) async throws -> WireMessage {
        cluster.fromClient("c", message)
        var replies: [WireMessage] = []
        let answered = cluster.settle(worker) {
            replies += cluster.toClient("c")
            return !replies.isEmpty
        }
        try #require(answered, "no reply to \(message.header.kind.name) \(message.address): \(cluster.warnings)")
        return replies[0]
    }

    static func send(_ json: String, to address: String, _ cluster: InMemoryCluster, _ worker: InMemoryWorker,
                     correlation: UInt64) async throws -> WireMessage {
        try await request(.event(address, json, correlation: correlation), through: cluster, to: worker)
    }

    static func deadLetters(_ request: DeadLetterRequest, correlation: UInt64) throws -> WireMessage {
        WireMessage(Header(.deadLetters, correlation: correlation), address: "w", payload: try WireJSON.encode(request))
    }

    /// A stored ledger: `total`, with `queued` events waiting.
    static func record(_ address: String, total: Int, queued: [LedgerMachine.Event] = []) throws -> MachineRecord {
        let queuedJSON = queued.map { event in
            switch event {
            case .add(let amount): #"{"add":{"_0":\#(amount)}}"#
            }
        }
        let json = #"{"state":{"total":\#(total)},"timers":[],"interruptedIO":[],"queuedEvents":[\#(queuedJSON.joined(separator: ","))],"omittedEffects":[]}"#
        let snapshot = try JSONDecoder().decode(Snapshot<LedgerMachine>.self, from: Data(json.utf8))
        return MachineRecord(address: address, type: "LedgerMachine", snapshot: try DurableRecord.encode(snapshot))
    }

    @Test func oneCrashIsCountedQuarantinesNothingAndIsForgivenWhenTheEventRunsToTheEnd() async throws {
        let cluster = InMemoryCluster(topology: Self.topology)
        let store = MemoryMachineStore()
        let worker = try Self.worker(store, died: true)
        defer { worker.stop() }
        try await Self.started(worker, in: cluster)

        #expect(try store.crashes().map(\.count) == [1])
        #expect(try store.crashes().first?.event == Self.poison)
        #expect(try store.deadLetters().isEmpty)
        let reply = try await Self.send(#"{"add":{"_0":13}}"#, to: "ledger", cluster, worker, correlation: 1)
        #expect(reply.header.kind == .state)
        #expect(reply.text == #"{"total":13}"#)
        // It ran to the end: an operator's kill -9 in the middle of it is forgiven.
        let forgiven = cluster.settle(worker) { (try? store.crashes().isEmpty) ?? false }
        #expect(forgiven, "\((try? store.crashes()) ?? [])")
    }

    @Test func theSecondCrashQuarantinesTheEventTakesItOutOfRecoveryAndRefusesItWhenSentAgain() async throws {
        let cluster = InMemoryCluster(topology: Self.topology)
        let store = MemoryMachineStore()
        var before = StoreCommit()
        before.records = [try Self.record("ledger", total: 5, queued: [.add(13), .add(1)]), try Self.record("other", total: 7)]
        try store.commit(before)
        #expect(try store.countCrash(of: "ledger", event: Self.poison, at: 0) == 1) // the first death, counted by the last start
        let worker = try Self.worker(store, died: true)
        defer { worker.stop() }
        try await Self.started(worker, in: cluster)

        let letters = try store.deadLetters()
        try #require(letters.count == 1)
        #expect(letters[0].address == "ledger")
        #expect(letters[0].type == "LedgerMachine")
        #expect([letters[0].binary ? 1 : 2] + letters[0].event == Self.poison)
        #expect(letters[0].crashes == 2)
        #expect(letters[0].error.contains("died while running it, 2 times"))
        #expect(try store.crashes().isEmpty)
        // Out of the stored record: recovery runs what was queued after it (1), not it (13).
        #expect(try await Self.request(WireMessage(Header(.get, correlation: 1), address: "ledger"), through: cluster, to: worker).text == #"{"total":6}"#)
        #expect(try await Self.request(WireMessage(Header(.get, correlation: 2), address: "other"), through: cluster, to: worker).text == #"{"total":7}"#)

        let refused = try await Self.send(#"{"add":{"_0":13}}"#, to: "ledger", cluster, worker, correlation: 3)
        #expect(refused.header.kind == .error)
        let error = try WireJSON.decode(WireError.self, from: refused.payload)
        #expect(error.code == .quarantined)
        #expect(error.message.contains("dead letter w:\(letters[0].id!)"), "\(error.message)")
        #expect(error.message.contains("fsm-send dead-letters"))
        // The same event for another machine, and other events for this one, run.
        #expect(try await Self.send(#"{"add":{"_0":13}}"#, to: "other", cluster, worker, correlation: 4).text == #"{"total":20}"#)
        #expect(try await Self.send(#"{"add":{"_0":2}}"#, to: "ledger", cluster, worker, correlation: 5).text == #"{"total":8}"#)
    }

    @Test func anAdminListsDropsAndRetriesDeadLetters() async throws {
        let cluster = InMemoryCluster(topology: Self.topology)
        let store = MemoryMachineStore()
        var letters = StoreCommit()
        for amount in [13, 21] {
            let identity = Self.identity(.add(amount))
            letters.deadLetters.append(DeadLetter(address: "ledger", type: "LedgerMachine", event: Array(identity.dropFirst()),
                                                  binary: identity[0] == 1, error: "the worker died while running it, 2 times",
                                                  crashes: 2, time: 1_700_000_000_000))
        }
        try store.commit(letters)
        let worker = try Self.worker(store, died: false)
        defer { worker.stop() }
        try await Self.started(worker, in: cluster)

        let listed = try await Self.request(try Self.deadLetters(.init(.list), correlation: 1), through: cluster, to: worker)
        #expect(listed.header.kind == .deadLetterList)
        let list = try WireJSON.decode(DeadLetterList.self, from: listed.payload)
        #expect(list.worker == "w")
        #expect(list.deadLetters.map(\.id) == [1, 2])
        let thirteen = try JSONValue(parsing: Data(#"{"add":{"_0":13}}"#.utf8))
        #expect(list.deadLetters.first?.event == thirteen)
        #expect(list.deadLetters.first?.crashes == 2)
        #expect(try await Self.send(#"{"add":{"_0":13}}"#, to: "ledger", cluster, worker, correlation: 2).header.kind == .error)

        // Retry: delivered once more, answered with the state it committed, then no longer refused.
        let retried = try await Self.request(try Self.deadLetters(.init(.retry, id: 1), correlation: 3), through: cluster, to: worker)
        #expect(retried.header.kind == .state)
        #expect(retried.text == #"{"total":13}"#)
        #expect(try store.deadLetters().compactMap(\.id) == [2])
        #expect(try await Self.send(#"{"add":{"_0":13}}"#, to: "ledger", cluster, worker, correlation: 4).text == #"{"total":26}"#)

        // Drop: gone, and its event accepted again.
        let dropped = try await Self.request(try Self.deadLetters(.init(.drop, id: 2), correlation: 5), through: cluster, to: worker)
        #expect(dropped.header.kind == .accepted)
        #expect(try store.deadLetters().isEmpty)
        #expect(try await Self.send(#"{"add":{"_0":21}}"#, to: "ledger", cluster, worker, correlation: 6).text == #"{"total":47}"#)
        let again = try await Self.request(try Self.deadLetters(.init(.drop, id: 2), correlation: 7), through: cluster, to: worker)
        #expect(again.header.kind == .error)
        #expect(try WireJSON.decode(WireError.self, from: again.payload).code == .unknownDeadLetter)
    }
}

/// Adds what it is told.
enum LedgerMachine: Machine {
    enum Event: Codable, Sendable { case add(Int) }
    struct State: Codable, Sendable { var total = 0 }
    static var initialState: State { State() }
    static func update(_ state: inout State, event: Event) -> Effect {
        switch event {
        case .add(let amount): state.total += amount
        }
        return .none
    }
}
