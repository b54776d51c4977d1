@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
import GroveWire
import Testing

/// A real worker runtime and a real machine behind the coordinator's real driver, in one
/// process with no socket (`InMemoryWorker` joined to an `InMemoryCluster`).
@Suite(.timeLimit(.minutes(2)))
struct InMemoryWorkerTests {
    static let topology = Topology(
        name: "one-worker",
        coordinator: .init(clients: "inproc://clients", workers: "inproc://workers", events: "inproc://events"),
        workers: [.init(name: "w")],
        machines: [.init(name: "tally", type: "TallyMachine", worker: "w"),
                   .init(name: "tallies", type: "TallyMachine", worker: "w", keyed: true)],
        heartbeat: .init(intervalMs: 50, timeoutMs: 200)
    )

    @Test func aClientsEventsReachARealMachineAndItsStatesComeBackInOrder() async throws {
        let cluster = InMemoryCluster(topology: Self.topology)
        var configuration = WorkerConfiguration()
        configuration.register(TallyMachine.self)
        let worker = try InMemoryWorker(name: "w", configuration: configuration)
        defer { worker.stop() }

        worker.start()
        let registered = cluster.settle(worker) { cluster.driver.ready.withLock { $0.all } }
        try #require(registered, "the worker's registration was not accepted: \(cluster.warnings)")

        // Three events for one machine and one for another, in one turn, one batch to the worker.
        let events: [WireMessage] = [.event("tally", correlation: 1), .event("tally", correlation: 2),
                                     .event("tally", correlation: 3), .event("tallies/x", correlation: 9)]
        cluster.fromClients(events.map { ("c", $0) })
        var replies: [WireMessage] = []
        let answered = cluster.settle(worker) {
            replies += cluster.toClient("c")
            return replies.count >= 4
        }
        try #require(answered, "\(replies.count) replies of 4")
        #expect(replies.allSatisfy { $0.header.kind == .state }, "\(replies.map(\.text))")
        let tally = replies.filter { $0.address == "tally" }
        #expect(tally.map(\.header.correlation) == [1, 2, 3])
        #expect(try tally.map { try WireJSON.decode(TallyMachine.State.self, from: $0.payload).count } == [1, 2, 3])
        let other = try #require(replies.first { $0.address == "tallies/x" })
        #expect(other.header.correlation == 9)
        #expect(try WireJSON.decode(TallyMachine.State.self, from: other.payload).count == 1)
    }
}
