@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
import Grove
import GroveWire
import Testing

/// A SwiftTea reducer registered as a value (`register(_:initialState:reduce:environment:)`),
/// durable with `state` and `journal`, across a worker's restart: the restored instance has the
/// exact state, and runs on with the registration's reducer and environment.
@Suite(.timeLimit(.minutes(2)))
struct ReducerWorkerTests {
    static let topology = Topology.durableWorker("reducers", machines: [
        .init(name: "ledger", type: "Ledger", worker: "w", durability: .journal),
        .init(name: "ledgers", type: "Ledger", worker: "w", keyed: true, durability: .state),
        .init(name: "plain", type: "PlainLedger", worker: "w", durability: .state),
    ])

    struct Ledger: Codable, Equatable, Sendable {
        var total = 0
        var entries = 0
    }

    enum LedgerAction: Codable, Equatable, Sendable {
        case add(Int)
    }

    struct LedgerEnvironment: Sendable {
        var factor: Int
    }

    /// A free reducer with an environment, as seed 002 writes them.
    static func ledgerReducer(state: Ledger, action: LedgerAction, environment: LedgerEnvironment) -> (Ledger, TeaEffect<LedgerAction, Void>) {
        switch action {
        case .add(let amount):
            var newState = state
            newState.total += amount * environment.factor
            newState.entries += 1
            return (newState, .none)
        }
    }

    static func worker(_ store: MemoryMachineStore) throws -> (worker: InMemoryWorker, kill: () -> Void) {
        var configuration = WorkerConfiguration()
        configuration.register("Ledger", initialState: Ledger(total: 1000), reduce: ledgerReducer, environment: LedgerEnvironment(factor: 10))
        configuration.register("PlainLedger", initialState: Ledger()) { state, action in
            ledgerReducer(state: state, action: action, environment: LedgerEnvironment(factor: 1))
        }
        let session = StoreSession(store)
        let worker = try InMemoryWorker(name: "w", configuration: configuration, openStore: { session })
        return (worker, {
            worker.stop()
            session.revoke()
        })
    }

    @Test func theRegistrationsInitialStateStartsEachInstanceAndOnlyTheUsersStateIsSent() async throws {
        let cluster = InMemoryCluster(topology: Self.topology)
        let (worker, kill) = try Self.worker(MemoryMachineStore())
        defer { kill() }
        try await JournalWorkerTests.start(worker, in: cluster)
        #expect(try await JournalWorkerTests.add(2, to: "ledger", cluster, worker, correlation: 1) == #"{"entries":1,"total":1020}"#)
        #expect(try await JournalWorkerTests.add(2, to: "plain", cluster, worker, correlation: 2) == #"{"entries":1,"total":2}"#)
    }

    @Test func aRestartedWorkerRestoresEachDurableReducerToItsExactState() async throws {
        let cluster = InMemoryCluster(topology: Self.topology)
        let store = MemoryMachineStore()
        let (first, killFirst) = try Self.worker(store)
        try await JournalWorkerTests.start(first, in: cluster)
        // `journal`: a record at 3 (snapshotEvery), event 4 in the journal after it.
        for (amount, correlation) in [(1, 1), (2, 2), (3, 3)] as [(Int, UInt64)] {
            _ = try await JournalWorkerTests.add(amount, to: "ledger", cluster, first, correlation: correlation)
        }
        #expect(try await JournalWorkerTests.add(4, to: "ledger", cluster, first, correlation: 4) == #"{"entries":4,"total":1100}"#)
        #expect(try JournalWorkerTests.journal(store, "ledger") == [4])
        // `state`: a record per event.
        #expect(try await JournalWorkerTests.add(5, to: "ledgers/x", cluster, first, correlation: 5) == #"{"entries":1,"total":1050}"#)
        #expect(try await JournalWorkerTests.add(7, to: "plain", cluster, first, correlation: 6) == #"{"entries":1,"total":7}"#)
        killFirst()

        let (restarted, killRestarted) = try Self.worker(store)
        defer { killRestarted() }
        try await JournalWorkerTests.start(restarted, in: cluster)
        // Each where it was, and reduced on by the registration's reducer and environment.
        #expect(try await JournalWorkerTests.add(1, to: "ledger", cluster, restarted, correlation: 7) == #"{"entries":5,"total":1110}"#)
        #expect(try await JournalWorkerTests.add(1, to: "ledgers/x", cluster, restarted, correlation: 8) == #"{"entries":2,"total":1060}"#)
        #expect(try await JournalWorkerTests.add(1, to: "plain", cluster, restarted, correlation: 9) == #"{"entries":2,"total":8}"#)
    }
}
