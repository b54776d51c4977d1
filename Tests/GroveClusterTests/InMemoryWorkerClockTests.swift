@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
import GroveTesting
import GroveWire
import Testing

/// A worker's machines run their timers on the clock the runtime is given (`WorkerRuntime`'s
/// `clock`, through `HostWiring` to each host): under a `TestClock`, an hour-long alarm rings
/// when the test moves time, and not before.
@Suite(.timeLimit(.minutes(2)))
struct InMemoryWorkerClockTests {
    static let topology = Topology.durableWorker("alarm", machines: [.init(name: "alarm", type: "AlarmMachine", worker: "w")])

    @Test func anHourLongTimerRingsWhenTheTestClockMovesAnHour() async throws {
        let clock = TestClock()
        let cluster = InMemoryCluster(topology: Self.topology)
        var configuration = WorkerConfiguration()
        configuration.register(AlarmMachine.self)
        let worker = try InMemoryWorker(name: "w", configuration: configuration, clock: clock)
        defer { worker.stop() }
        worker.start()
        let registered = cluster.settle(worker) { cluster.driver.ready.withLock { $0.all } }
        try #require(registered, "the worker's registration was not accepted: \(cluster.warnings)")

        cluster.fromClients([("c", .event("alarm", #"{"arm":{"milliseconds":3600000}}"#, correlation: 1))])
        var replies: [WireMessage] = []
        let armed = cluster.settle(worker) {
            replies += cluster.toClient("c")
            return !replies.isEmpty
        }
        try #require(armed, "the arm event was not answered")
        #expect(try WireJSON.decode(AlarmMachine.State.self, from: replies[0].payload) == .init(armed: true, rang: 0))

        // A minute short of the hour: nothing is due, so nothing rings.
        await clock.advance(by: .seconds(3540))
        #expect(try await Self.alarm(on: worker) == .init(armed: true, rang: 0))

        // The hour: the timer fires as the clock passes it; its event runs in a turn of its own,
        // on the worker's loop, which the read of the state runs: no wait.
        await clock.advance(by: .seconds(60))
        #expect(try await Self.alarm(on: worker) == .init(armed: false, rang: 1), "the alarm did not ring an hour later on the test clock")
    }

    /// The alarm's state as its machine has it now.
    static func alarm(on worker: InMemoryWorker) async throws -> AlarmMachine.State? {
        guard let json = worker.peekState(of: "alarm") else { return nil }
        return try WireJSON.decode(AlarmMachine.State.self, from: Array(json.utf8))
    }
}
