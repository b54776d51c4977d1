import Grove
@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
@_spi(GroveInternal) import GroveWire
import Testing

/// Timeouts of the io a worker's machines run on its own handlers, decided by the worker's pure
/// core at its ticks: the runtime only cancels the tasks and answers the machines it names.
@Suite(.timeLimit(.minutes(2))) struct WorkerCoreLocalIOTests {
    let session = WorkerCoreTests()
    var start: ContinuousClock.Instant { session.start }

    /// A core welcomed with a 500 ms default and 100 ms for `ValidateForm`.
    func welcomed() -> WorkerCore {
        var core = session.core()
        var welcome = try! WireJSON.decode(Welcome.self, from: session.welcome())
        welcome.ioTimeoutMs = 500
        welcome.localIOTimeoutsMs = ["ValidateForm": 100]
        _ = core.decide(Header(.welcome), payload: try! WireJSON.encode(welcome)[...], now: start)
        return core
    }

    static func timedOut(_ actions: [WorkerAction]) -> [WorkerCore.LocalTimeout] {
        actions.flatMap { action -> [WorkerCore.LocalTimeout] in
            if case .timeOutLocalCalls(let timeouts) = action { timeouts } else { [] }
        }
    }

    @Test func beforeAnyWelcomeTheTopologyDefaultApplies() {
        var core = session.core()
        let call = core.startLocalCall(address: "loader/a", request: "FetchItems", now: start)
        #expect(core.expireLocalCalls(now: start + .milliseconds(29_999)).isEmpty)
        let timeouts = Self.timedOut(core.expireLocalCalls(now: start + .milliseconds(30_000)))
        #expect(timeouts.map(\.call) == [call])
        #expect(timeouts.first?.address == "loader/a")
        #expect(timeouts.first?.failure.code == .timeout)
        #expect(timeouts.first?.failure.message.contains("'FetchItems' ran longer than its timeout of 30000 ms on worker edge") == true)
    }

    @Test func eachRequestTakesItsOwnTimeoutElseTheWelcomesDefault() {
        var core = welcomed()
        let fetch = core.startLocalCall(address: "loader/a", request: "FetchItems", now: start)
        let validate = core.startLocalCall(address: "form", request: "ValidateForm", now: start)
        #expect(fetch != validate)
        #expect(core.expireLocalCalls(now: start + .milliseconds(99)).isEmpty)
        #expect(Self.timedOut(core.expireLocalCalls(now: start + .milliseconds(100))).map(\.call) == [validate])
        #expect(core.expireLocalCalls(now: start + .milliseconds(499)).isEmpty)
        #expect(Self.timedOut(core.expireLocalCalls(now: start + .milliseconds(500))).map(\.call) == [fetch])
        #expect(core.localCalls.isEmpty)
    }

    @Test func aCallThatEndsInTimeNeverTimesOutAndOneTimedOutEndsNoMore() {
        var core = welcomed()
        let quick = core.startLocalCall(address: "loader/a", request: "FetchItems", now: start)
        let slow = core.startLocalCall(address: "loader/b", request: "FetchItems", now: start + .milliseconds(10))
        let ended = core.endLocalCall(quick)
        #expect(ended)
        #expect(Self.timedOut(core.expireLocalCalls(now: start + .milliseconds(510))).map(\.call) == [slow])
        // Its handler answers late: the machine has its timeout already.
        let endedLate = core.endLocalCall(slow)
        #expect(!endedLate)
        #expect(core.expireLocalCalls(now: start + .seconds(5)).isEmpty)
    }

    @Test func theWorkersTickTimesCallsOut() {
        var core = welcomed()
        let call = core.startLocalCall(address: "form", request: "ValidateForm", now: start)
        #expect(Self.timedOut(core.tick(now: start + .milliseconds(50))).isEmpty)
        #expect(Self.timedOut(core.tick(now: start + .milliseconds(100))).map(\.call) == [call])
    }
}
