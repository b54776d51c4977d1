@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
import Grove
import GroveWire
import Synchronization
import Testing

/// A StateMachinePackage program whose transition awaits, on a worker, durable with `state` and
/// `journal`: killed while the transition awaits, the restarted worker runs it again from the
/// committed state, so the event is not lost (at least once).
@Suite(.serialized, .timeLimit(.minutes(2)))
struct AwaitingWorkerTests {
    static let topology = Topology(
        name: "awaiting",
        coordinator: .init(clients: "inproc://clients", workers: "inproc://workers", events: "inproc://events"),
        workers: [.init(name: "w")],
        machines: [.init(name: "ledger", type: "Ledger", worker: "w", durability: .journal),
                   .init(name: "loader", type: "Loader", worker: "w", durability: .journal),
                   .init(name: "loaders", type: "Loader", worker: "w", keyed: true, durability: .state)],
        heartbeat: .init(intervalMs: 100, timeoutMs: 5000)
    )

    /// A transition that awaits until the test lets it finish, counting its runs per worker.
    enum Loader: AwaitingStateMachineProgram {
        enum Event: Codable, Equatable, Sendable { case add(Int) }
        /// Which worker runs now (1, then 2 after the restart), the runs each started, and
        /// whether the killed worker's runs, which a killed process would never finish, may end
        /// (at the end of the test, so that their tasks do not outlive it).
        static let gate = Mutex((worker: 1, runs: [Int: Int](), released: false))

        static var stateMachine: StateMachine<Int, Event> {
            StateMachine(initial: 0) { total, event async in
                switch event {
                case .add(let amount):
                    let worker = gate.withLock { gate in
                        gate.runs[gate.worker, default: 0] += 1
                        return gate.worker
                    }
                    while worker == 1, !gate.withLock({ $0.released }) { try? await Task.sleep(for: .milliseconds(5)) }
                    return .newState(total + amount)
                }
            }
        }
    }

    static func worker(_ store: MemoryMachineStore) throws -> (worker: InMemoryWorker, kill: () -> Void) {
        var configuration = WorkerConfiguration()
        configuration.register(LedgerMachine.self, as: "Ledger")
        configuration.register(AwaitingStateMachine<Loader>.self, as: "Loader")
        let session = StoreSession(store)
        let worker = try InMemoryWorker(name: "w", configuration: configuration, openStore: { session })
        return (worker, {
            worker.stop()
            session.revoke()
        })
    }

    /// A `get` may wait for a transition running on a task of its own, outside the worker's
    /// turns, which a loaded machine may not have finished: pumped until it is answered.
    static func get(_ address: String, _ cluster: InMemoryCluster, _ worker: InMemoryWorker, correlation: UInt64) async throws -> String {
        cluster.fromClient("c", WireMessage(Header(.get, correlation: correlation), address: address))
        var replies: [WireMessage] = []
        let answered = try await cluster.pump(worker, until: {
            replies += cluster.toClient("c")
            return !replies.isEmpty
        }, deadline: .seconds(30))
        try #require(answered, "no reply to get \(address): \(cluster.warnings)")
        return replies[0].text
    }

    @Test func aTransitionAwaitingWhenItsWorkerIsKilledRunsAgainAfterTheRestart() async throws {
        Loader.gate.withLock { $0 = (worker: 1, runs: [:], released: false) }
        defer { Loader.gate.withLock { $0.released = true } }
        let cluster = InMemoryCluster(topology: Self.topology)
        let store = MemoryMachineStore()
        let (first, killFirst) = try Self.worker(store)
        try await JournalWorkerTests.start(first, in: cluster)
        // Answered in its turn: the state before, the event in transition.
        #expect(try await JournalWorkerTests.add(5, to: "loader", cluster, first, correlation: 1)
                == #"{"inTransition":{"add":{"_0":5}},"started":1,"state":0,"waiting":[]}"#)
        #expect(try await JournalWorkerTests.add(7, to: "loader", cluster, first, correlation: 2)
                == #"{"inTransition":{"add":{"_0":5}},"started":1,"state":0,"waiting":[{"add":{"_0":7}}]}"#)
        #expect(try await JournalWorkerTests.add(3, to: "loaders/x", cluster, first, correlation: 3)
                == #"{"inTransition":{"add":{"_0":3}},"started":1,"state":0,"waiting":[]}"#)
        // The replies come from the turn; the transitions run on tasks of their own, which a
        // loaded machine may not have started yet: both must have begun before the kill.
        let bothRunning = try await cluster.pump(first) { Loader.gate.withLock { $0.runs } == [1: 2] }
        #expect(bothRunning, "runs before the kill: \(Loader.gate.withLock { $0.runs })")
        killFirst()

        Loader.gate.withLock { $0.worker = 2 }
        let (restarted, killRestarted) = try Self.worker(store)
        defer { killRestarted() }
        try await JournalWorkerTests.start(restarted, in: cluster)
        // Each transition ran again (twice for `loader`: 5, then 7 behind it) and committed.
        var correlation: UInt64 = 10
        let deadline = ContinuousClock.now + .seconds(45)
        for (address, expected) in [("loader", #"{"started":3,"state":12,"waiting":[]}"#),
                                    ("loaders/x", #"{"started":2,"state":3,"waiting":[]}"#)] {
            var state = ""
            while state != expected, ContinuousClock.now < deadline {
                correlation += 1
                state = try await Self.get(address, cluster, restarted, correlation: correlation)
                cluster.pump(restarted)
            }
            #expect(state == expected, "\(address)")
        }
        // The killed worker's two runs, which never finished, and the restarted worker's three.
        #expect(Loader.gate.withLock { $0.runs } == [1: 2, 2: 3])
    }
}
