@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
@_spi(GroveInternal) import GroveWire
import Testing

/// What the worker does for what its machines send on their own, io calls to other workers and
/// outputs, decided by the pure core and checked without sockets: the runtime only sends what
/// it says and resumes the waiting tasks it names.
@Suite(.timeLimit(.minutes(2))) struct WorkerCoreCallTests {
    let start = ContinuousClock.now
    let session = WorkerCoreTests()
    let request: [UInt8] = [1, 2, 3]

    func welcomed() -> WorkerCore {
        var core = session.core()
        _ = core.decide(Header(.welcome), payload: session.welcome()[...], now: start)
        return core
    }

    /// The core's decision on an `io-result` for `call`.
    func result(_ core: inout WorkerCore, for call: UInt64, _ payload: [UInt8]) -> WorkerCore.Decision {
        core.decide(Header(.ioResult, flags: .binary, correlation: call), payload: payload[...], now: start)
    }

    static let response: [UInt8] = [IOCallResult.Outcome.response.rawValue, 0x2A]

    @Test func aCallIsSentUnderAFreshIDAndItsResultAnswersItOnce() {
        var core = welcomed()
        let first = core.startCall(address: "loader", payload: request, binary: true, cancelled: false)
        let second = core.startCall(address: "auth/t", payload: request, binary: false, cancelled: false)
        #expect(first.action == .sendRequest(call: first.call, address: "loader", payload: request, binary: true))
        #expect(second.action == .sendRequest(call: second.call, address: "auth/t", payload: request, binary: false))
        #expect(first.call != second.call)
        #expect(core.calls == [first.call: "loader", second.call: "auth/t"])

        #expect(result(&core, for: first.call, Self.response) == .complete(.response([0x2A], binary: true)))
        // Once: a second result for the same call (a duplicate, a stranger's) is dropped.
        #expect(result(&core, for: first.call, Self.response) == .ignore)
        #expect(core.calls == [second.call: "auth/t"])
    }

    @Test func aCallCancelledBeforeItWasSentNeverLeaves() {
        var core = welcomed()
        let (call, action) = core.startCall(address: "loader", payload: request, binary: true, cancelled: true)
        #expect(action == .resume(call: call, WorkerCore.cancelledCall))
        #expect(core.calls.isEmpty)
        // The cancellation handler's own report comes later and finds nothing to do.
        #expect(core.cancelCall(call).isEmpty)
        #expect(result(&core, for: call, Self.response) == .ignore)
    }

    @Test func aCallCancelledAfterItWasSentIsAnsweredAtOnceAndCancelledRemotely() {
        var core = welcomed()
        let (call, _) = core.startCall(address: "loader", payload: request, binary: true, cancelled: false)
        #expect(core.cancelCall(call) == [.sendCancel(call: call, address: "loader"),
                                          .resume(call: call, WorkerCore.cancelledCall)])
        #expect(core.cancelCall(call).isEmpty, "answered once")
        // Its late result finds no one waiting.
        #expect(result(&core, for: call, Self.response) == .ignore)
        #expect(core.calls.isEmpty)
    }

    @Test func aCallAnsweredBeforeItsCancellationIsNotCancelled() {
        var core = welcomed()
        let (call, _) = core.startCall(address: "loader", payload: request, binary: true, cancelled: false)
        #expect(result(&core, for: call, Self.response) == .complete(.response([0x2A], binary: true)))
        #expect(core.cancelCall(call).isEmpty, "no io-cancel for a call that finished")
    }

    @Test func aSilentCoordinatorFailsEveryWaitingCallAndTheirLateResultsAreDropped() {
        var core = welcomed()
        let calls = (0..<3).map { _ in core.startCall(address: "loader", payload: request, binary: true, cancelled: false).call }
        // Silent past the welcome's 200 ms timeout.
        let actions = core.tick(now: start + .milliseconds(250))
        let failures = session.failures(actions)
        #expect(failures.map(\.code) == ["coordinator-lost"])
        #expect(core.calls.isEmpty)
        for call in calls {
            #expect(result(&core, for: call, Self.response) == .ignore)
            #expect(core.cancelCall(call).isEmpty)
        }
        // Ids are never reused: a task waiting under a new call cannot get an old call's result.
        let next = core.startCall(address: "loader", payload: request, binary: true, cancelled: false).call
        #expect(!calls.contains(next))
    }

    @Test func aCallStartedWhileTheCoordinatorIsAwayFailsAtOnceAndNeverLeaves() {
        var core = welcomed()
        _ = core.tick(now: start + .milliseconds(250))
        let (call, action) = core.startCall(address: "loader", payload: request, binary: true, cancelled: false)
        guard case .resume(call, .failure(let failure)) = action else {
            Issue.record("a call without a welcome should be answered at once, got \(action)")
            return
        }
        #expect(failure.code == "coordinator-lost")
        #expect(failure.message.contains("not registered with the coordinator"), "\(failure.message)")
        #expect(core.calls.isEmpty, "nothing waits for a result that cannot come")

        // Welcomed again: calls leave again.
        _ = core.decide(Header(.welcome), payload: session.welcome()[...], now: start + .milliseconds(300))
        guard case .sendRequest = core.startCall(address: "loader", payload: request, binary: true, cancelled: false).action else {
            Issue.record("a welcomed worker's call should leave")
            return
        }
    }

    @Test func aCoordinatorThatForgotTheWorkerFailsItsCalls() {
        var core = welcomed()
        let (call, _) = core.startCall(address: "loader", payload: request, binary: true, cancelled: false)
        let unavailable = WireError(.unavailable, "forgotten").payload
        guard case .act(let actions) = core.decide(Header(.error), payload: unavailable[...], now: start) else {
            Issue.record("an error from the coordinator should be a session matter")
            return
        }
        #expect(session.failures(actions).map(\.code) == ["coordinator-lost"])
        #expect(result(&core, for: call, Self.response) == .ignore)
    }

    @Test func anOutputIsSentForTheCoordinator() {
        let core = welcomed()
        let payload = Array(#"{"output":"signedIn"}"#.utf8)
        #expect(core.output(address: "auth/t", payload: payload) == .sendOutput(address: "auth/t", payload: payload))
    }
}
