import Foundation
@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
@_spi(GroveInternal) import GroveWire
import Testing

/// The topology's io limits on the coordinator's core alone: timeouts decided by ticks, and
/// calls per worker against `ioLimits.concurrentPerWorker`.
@Suite("CoordinatorCore: io timeouts and limits", .timeLimit(.minutes(2)))
struct CoordinatorCoreIOLimitTests {
    /// The unit topology with `FetchData` timing out after 300 ms, everything else after the
    /// default of 1000 ms, and two calls at once per worker.
    static func fixture() -> CoreFixture {
        var topology = CoreFixture.topology
        topology.io = [.init(request: "FetchData", worker: "data", timeoutMs: 300), .init(request: "Authenticate", worker: "data")]
        topology.ioLimits = .init(timeoutMs: 1000, concurrentPerWorker: 2)
        var fixture = CoreFixture(topology: topology)
        fixture.registerAll()
        return fixture
    }

    /// What a tick did about io calls (its heartbeats left out).
    static func ioActions(_ actions: [CoordinatorAction]) -> [CoordinatorAction] {
        actions.filter { $0.sentToWorker?.message.header.kind != .heartbeat }
    }

    @Test func aCallPastItsTimeoutAnswersItsMachineTimeoutAndCancelsItWhereItRuns() throws {
        var fixture = Self.fixture()
        let call = try fixture.startedCall(5)
        #expect(Self.ioActions(fixture.core.tick(now: fixture.t0 + .milliseconds(299))) == [])

        let actions = Self.ioActions(fixture.core.tick(now: fixture.t0 + .milliseconds(300)))
        try #require(actions.count == 2, "\(actions)")
        let answer = try #require(actions[0].sentToWorker)
        #expect(answer.worker == "edge")
        #expect(answer.message.header.kind == .ioResult)
        #expect(answer.message.header.correlation == 5)
        #expect(answer.message.address == "loader")
        let failure = try #require(try ioFailure(of: answer.message))
        #expect(failure.code == "timeout")
        #expect(failure.message.contains("timeout of 300 ms"), "\(failure.message)")
        // The same io-cancel a machine's cancel sends, to the worker running it.
        #expect(actions[1] == .toWorker(call.target, WireMessage(Header(.ioCancel, correlation: call.id), address: "loader")))
        // Published once the worker running it says its task ended, not before.
        #expect(try effectEvents(in: actions).isEmpty)
        let ended = WireMessage(Header(.ioCancelled, correlation: call.id), address: "loader",
                                 payload: try WireJSON.encode(IOCancelAnswer(task: .ended, endedAtNs: 42)))
        let published = fixture.fromWorker(call.target, ended, after: .milliseconds(301))
        let event = try #require(try effectEvents(in: published).first)
        #expect(event.phase == .failed)
        #expect(event.task == .ended)
        #expect(event.worker == call.target)
        #expect(event.reason?.hasPrefix("timeout: 'FetchData' ran longer than its timeout of 300 ms") == true, "\(event)")

        #expect(fixture.core.calls.isEmpty)
        #expect(fixture.core.callsRunning.isEmpty)
        // The handler's late result reaches nobody, and later ticks time out nothing more.
        #expect(fixture.fromWorker(call.target, ioResult(id: call.id), after: .milliseconds(310)) == [])
        #expect(Self.ioActions(fixture.core.tick(now: fixture.t0 + .milliseconds(400))) == [])
    }

    @Test func aRequestWhosePlacementSetsNoTimeoutTakesTheDefault() throws {
        var fixture = Self.fixture()
        _ = fixture.startCall(6, name: "Authenticate")
        #expect(Self.ioActions(fixture.core.tick(now: fixture.t0 + .milliseconds(999))) == [])
        let actions = Self.ioActions(fixture.core.tick(now: fixture.t0 + .milliseconds(1000)))
        let answer = try #require(actions.first?.sentToWorker)
        #expect(answer.message.header.correlation == 6)
        #expect(try ioFailure(of: answer.message)?.message.contains("timeout of 1000 ms") == true)
    }

    @Test func theDeadlineCountsFromWhenTheRequestArrived() throws {
        var fixture = Self.fixture()
        _ = fixture.fromWorker("edge", ioRequest(7), after: .milliseconds(200))
        #expect(Self.ioActions(fixture.core.tick(now: fixture.t0 + .milliseconds(499))) == [])
        let actions = Self.ioActions(fixture.core.tick(now: fixture.t0 + .milliseconds(500)))
        #expect(actions.first?.sentToWorker?.message.header.correlation == 7)
    }

    @Test func callsAnsweredOrCancelledInTimeNeverTimeOut() throws {
        var fixture = Self.fixture()
        let answered = try fixture.startedCall(8)
        let cancelled = try fixture.startedCall(9)
        #expect(fixture.fromWorker(answered.target, ioResult(id: answered.id), after: .milliseconds(100)).count == 2)
        let cancel = WireMessage(Header(.ioCancel, correlation: 9), address: "loader")
        // The io-cancel alone: `cancelled` is published once the worker says the task ended.
        #expect(fixture.fromWorker("edge", cancel, after: .milliseconds(100)).count == 1)
        #expect(Self.ioActions(fixture.core.tick(now: fixture.t0 + .milliseconds(1000))) == [])
        // The cancelled call's task runs until its worker says it ended.
        #expect(fixture.core.callsRunning == [cancelled.target: 1])
    }

    @Test func onlyTheCallsPastTheirDeadlineTimeOutInTheOrderTheyStarted() throws {
        var fixture = Self.fixture()
        _ = fixture.fromWorker("edge", ioRequest(10), after: .milliseconds(0))
        _ = fixture.fromWorker("edge", ioRequest(11), after: .milliseconds(50))
        _ = fixture.fromWorker("edge", ioRequest(12), after: .milliseconds(200))
        let actions = Self.ioActions(fixture.core.tick(now: fixture.t0 + .milliseconds(350)))
        let answered = actions.compactMap(\.sentToWorker).filter { $0.message.header.kind == .ioResult }.map(\.message.header.correlation)
        #expect(answered == [10, 11])
        #expect(fixture.core.calls.values.map(\.originID) == [12])
        let later = Self.ioActions(fixture.core.tick(now: fixture.t0 + .milliseconds(500)))
        #expect(later.compactMap(\.sentToWorker).filter { $0.message.header.kind == .ioResult }.map(\.message.header.correlation) == [12])
    }

    @Test func aCallBeyondEveryWorkersLimitFailsBusyAtOnce() throws {
        var fixture = Self.fixture()
        let targets = try (1...4).map { try fixture.startedCall(UInt64($0)).target }
        #expect(targets == ["data-1", "data-2", "data-1", "data-2"])
        #expect(fixture.core.callsRunning == ["data-1": 2, "data-2": 2])

        let refused = fixture.startCall(23)
        try CoordinatorCoreIOTests.expectFailure(refused, code: "busy", mentions: "ioLimits.concurrentPerWorker")
        #expect(fixture.core.calls.count == 4)
    }

    @Test func aFullWorkerIsPassedOverAndFreedByAnswersAndEndedTasks() throws {
        var fixture = Self.fixture()
        let calls = try (1...3).map { try fixture.startedCall(UInt64($0)) }
        #expect(calls.map(\.target) == ["data-1", "data-2", "data-1"])
        _ = fixture.fromWorker("data-2", ioResult(id: calls[1].id), after: .milliseconds(10))
        #expect(try fixture.startedCall(4).target == "data-2")
        // data-1 runs two: its turn passes to data-2.
        #expect(try fixture.startedCall(5).target == "data-2")
        let refused = try #require(fixture.startCall(6).first?.sentToWorker)
        #expect(try ioFailure(of: refused.message)?.code == "busy")
        // Timeouts cancel every call, but their tasks keep their places until they ended.
        _ = fixture.core.tick(now: fixture.t0 + .milliseconds(300))
        #expect(fixture.core.calls.isEmpty)
        #expect(fixture.core.callsRunning == ["data-1": 2, "data-2": 2])
        #expect(try ioFailure(of: #require(fixture.startCall(9).first?.sentToWorker).message)?.code == "busy")
        _ = fixture.fromWorker("data-1", try cancelAnswer(calls[0].id, IOCancelAnswer(task: .ended)), after: .milliseconds(310))
        #expect(try fixture.startedCall(7).target == "data-1")
    }

    @Test func theWelcomeCarriesTheTimeoutsOfTheIOAWorkerRunsForItsOwnMachines() throws {
        var topology = Self.fixture().core.topology
        topology.ioLimits.timeoutMs = 1200
        var fixture = CoreFixture(topology: topology)
        let data = try #require(fixture.register("data-1").first?.sentToWorker)
        let served = try payload(Welcome.self, of: data.message)
        // FetchData is placed on data's own group: data's machines run it on their own handlers.
        #expect(served.ioTimeoutMs == 1200)
        #expect(served.localIOTimeoutsMs == ["FetchData": 300])
        let edge = try #require(fixture.register("edge").first?.sentToWorker)
        let calling = try payload(Welcome.self, of: edge.message)
        #expect(calling.ioTimeoutMs == 1200)
        #expect(calling.localIOTimeoutsMs == nil)
    }

    @Test func losingAWorkerFreesItsPlaces() throws {
        var fixture = Self.fixture()
        let calls = try (1...4).map { try fixture.startedCall(UInt64($0)) }
        _ = fixture.core.lose("data-1", reason: "test", cause: .exited)
        #expect(fixture.core.callsRunning == ["data-2": 2])
        // The machines' worker lost: its calls are cancelled where they run, whose tasks keep
        // their places until data-2 says they ended.
        _ = fixture.core.lose("edge", reason: "test", cause: .exited)
        #expect(fixture.core.callsByOrigin.isEmpty)
        #expect(fixture.core.callsRunning == ["data-2": 2])
        for call in calls where call.target == "data-2" {
            let answered = fixture.fromWorker("data-2", try cancelAnswer(call.id, IOCancelAnswer(task: .ended)))
            #expect(answered == [], "published `lost` when edge was lost, not again")
        }
        #expect(fixture.core.callsRunning == [:])
    }
}
