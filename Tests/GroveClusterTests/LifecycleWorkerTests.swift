@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
import Grove
import GroveWire
import Testing

/// A tally that ends when told to: a terminal state to reach on purpose.
enum FinishingTally: Machine {
    enum Event: Codable, Sendable { case increment, finish }
    struct State: Codable, Sendable, Equatable {
        var count = 0
        var finished = false
    }
    static var initialState: State { State() }
    static func isTerminal(_ state: State) -> Bool { state.finished }
    static func update(_ state: inout State, event: Event) -> Effect {
        switch event {
        case .increment: state.count += 1
        case .finish: state.finished = true
        }
        return .none
    }
}

/// A real worker runtime carrying out what its core decides when machines end: a removed
/// instance lets its host go and frees its key, a restarting machine comes back from its initial
/// state, an admin's restart answers with the new instance's state. One process, no socket.
@Suite(.timeLimit(.minutes(2)))
struct LifecycleWorkerTests {
    static let topology = Topology(
        name: "lifecycle",
        coordinator: .init(clients: "inproc://clients", workers: "inproc://workers", events: "inproc://events"),
        workers: [.init(name: "w")],
        machines: [.init(name: "tally", type: "FinishingTally", worker: "w", onEnd: .restart),
                   .init(name: "kept", type: "FinishingTally", worker: "w"),
                   .init(name: "sessions", type: "FinishingTally", worker: "w", keyed: true, onEnd: .remove)],
        // Long enough for a tick ahead of the clock (a restart due) not to count as the
        // coordinator's silence.
        heartbeat: .init(intervalMs: 1000, timeoutMs: 10_000)
    )

    /// A registered worker hosting ``topology``.
    static func started() async throws -> (InMemoryCluster, InMemoryWorker) {
        let cluster = InMemoryCluster(topology: topology)
        var configuration = WorkerConfiguration()
        configuration.register(FinishingTally.self)
        let worker = try InMemoryWorker(name: "w", configuration: configuration)
        worker.start()
        let registered = cluster.settle(worker) { cluster.driver.ready.withLock { $0.all } }
        try #require(registered, "the worker's registration was not accepted: \(cluster.warnings)")
        return (cluster, worker)
    }

    /// Sends `message` from client `c` and returns its reply.
    static func ask(_ message: WireMessage, _ cluster: InMemoryCluster, _ worker: InMemoryWorker) async throws -> WireMessage {
        cluster.fromClient("c", message)
        var replies: [WireMessage] = []
        let answered = cluster.settle(worker) {
            replies += cluster.toClient("c").unbatched
            return !replies.isEmpty
        }
        try #require(answered, "no reply to \(message.header.kind.name) \(message.address)")
        return replies[0]
    }

    static func state(of reply: WireMessage) throws -> FinishingTally.State {
        try #require(reply.header.kind == .state, "expected a state, got \(reply.header.kind.name) \(reply.text)")
        return try WireJSON.decode(FinishingTally.State.self, from: reply.payload)
    }

    /// Runs `body` on the worker's loop, isolated to its runtime.
    static func onLoop<T: Sendable>(_ worker: InMemoryWorker, _ body: @escaping @Sendable (isolated WorkerRuntime) -> T) -> T {
        worker.onLoop(body)
    }

    @Test func aRemovedInstanceLetsItsHostGoAndItsKeyStartsAfresh() async throws {
        let (cluster, worker) = try await Self.started()
        defer { worker.stop() }
        _ = try await Self.ask(.event("sessions/s-1", #""increment""#, correlation: 1), cluster, worker)
        struct Weak: @unchecked Sendable { weak var instance: AnyObject? }
        let ended = Self.onLoop(worker) { Weak(instance: $0.instances["sessions/s-1"].map { $0 as AnyObject }) }
        try #require(ended.instance != nil)

        let finished = try Self.state(of: try await Self.ask(.event("sessions/s-1", #""finish""#, correlation: 2), cluster, worker))
        #expect(finished == .init(count: 1, finished: true))
        // Removed before its last reply left: no instance, and its host released.
        let gone = Self.onLoop(worker) { $0.instances["sessions/s-1"] == nil }
        #expect(gone)
        worker.runUntilIdle()
        #expect(ended.instance == nil, "the removed instance's host was not released")
        let unlisted = cluster.settle(worker) {
            !cluster.driver.core.listing().machines.contains { $0.instances.contains("sessions/s-1") }
        }
        #expect(unlisted, "the coordinator no longer lists it")

        // The key's next event starts a new instance from the initial state.
        let fresh = try Self.state(of: try await Self.ask(.event("sessions/s-1", #""increment""#, correlation: 3), cluster, worker))
        #expect(fresh == .init(count: 1, finished: false))
    }

    @Test func aRestartingMachineComesBackFromItsInitialState() async throws {
        let (cluster, worker) = try await Self.started()
        defer { worker.stop() }
        _ = try await Self.ask(.event("tally", #""increment""#, correlation: 1), cluster, worker)
        _ = try await Self.ask(.event("tally", #""finish""#, correlation: 2), cluster, worker)
        // Ended: a read answers its final state until the restart is due (the core's wait).
        let ended = try Self.state(of: try await Self.ask(WireMessage(Header(.get, correlation: 3), address: "tally"), cluster, worker))
        #expect(ended == .init(count: 1, finished: true))
        // The worker's tick runs the restart once its wait is over.
        _ = Self.onLoop(worker) { $0.tick(now: .now + .milliseconds(RestartPolicy().backoff.maxMs)) }
        let back = try Self.state(of: try await Self.ask(WireMessage(Header(.get, correlation: 4), address: "tally"), cluster, worker))
        #expect(back == .init(count: 0, finished: false))
    }

    @Test func anAdminRestartAnswersWithTheNewInstancesState() async throws {
        let (cluster, worker) = try await Self.started()
        defer { worker.stop() }
        for correlation in 1...3 { _ = try await Self.ask(.event("kept", #""increment""#, correlation: UInt64(correlation)), cluster, worker) }
        // Running: stopped, then started again.
        let restarted = try await Self.ask(WireMessage(Header(.restart, correlation: 4), address: "kept"), cluster, worker)
        #expect(try Self.state(of: restarted) == .init(count: 0, finished: false))
        #expect(try Self.state(of: try await Self.ask(.event("kept", #""increment""#, correlation: 5), cluster, worker)).count == 1)
        // Ended (onEnd stay): started again at once.
        _ = try await Self.ask(.event("kept", #""finish""#, correlation: 6), cluster, worker)
        let refused = try await Self.ask(.event("kept", #""increment""#, correlation: 7), cluster, worker)
        #expect(refused.wireError?.code == .machineEnded)
        let again = try await Self.ask(WireMessage(Header(.restart, correlation: 8), address: "kept"), cluster, worker)
        #expect(try Self.state(of: again) == .init(count: 0, finished: false))
        // A keyed instance no event spawned is not started by a restart.
        let unknown = try await Self.ask(WireMessage(Header(.restart, correlation: 9), address: "sessions/never"), cluster, worker)
        #expect(unknown.wireError?.code == .unknownMachine)
    }
}
