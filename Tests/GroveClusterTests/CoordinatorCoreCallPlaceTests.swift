@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
@_spi(GroveInternal) import GroveWire
import Testing

/// `ioLimits.concurrentPerWorker` counts tasks really running: a cancelled or timed-out call
/// keeps its place on the worker running it until that worker says the task ended
/// (`io-cancelled`, whatever its fate) or is lost.
@Suite("CoordinatorCore: places of cancelled io calls", .timeLimit(.minutes(2)))
struct CoordinatorCoreCallPlaceTests {
    /// Both data workers at their limit of two calls: 1 and 3 on data-1, 2 and 4 on data-2.
    static func fullFixture() throws -> (fixture: CoreFixture, calls: [(target: String, id: UInt64)]) {
        var fixture = CoordinatorCoreIOLimitTests.fixture()
        let calls = try (1...4).map { try fixture.startedCall(UInt64($0)) }
        try #require(calls.map(\.target) == ["data-1", "data-2", "data-1", "data-2"])
        return (fixture, calls)
    }

    /// Whether a new call from `edge` is refused `busy` (else it was forwarded).
    static func refusedBusy(_ fixture: inout CoreFixture, _ originID: UInt64) throws -> Bool {
        let sent = try #require(fixture.startCall(originID).first?.sentToWorker)
        guard sent.message.header.kind == .ioResult else { return false }
        return try ioFailure(of: sent.message)?.code == "busy"
    }

    static func cancel(_ originID: UInt64, in fixture: inout CoreFixture) {
        _ = fixture.fromWorker("edge", WireMessage(Header(.ioCancel, correlation: originID), address: "loader"))
    }

    @Test(arguments: [IOCancelAnswer(task: .ended, endedAtNs: 7), IOCancelAnswer(task: .finished), IOCancelAnswer(task: .unknown)])
    func aCancelledCallHoldsItsPlaceUntilItsWorkerAnswers(_ answer: IOCancelAnswer) throws {
        var (fixture, calls) = try Self.fullFixture()
        Self.cancel(1, in: &fixture)
        #expect(fixture.core.callsRunning == ["data-1": 2, "data-2": 2])
        #expect(try Self.refusedBusy(&fixture, 5), "the cancelled task may still run on data-1")

        _ = fixture.fromWorker("data-1", try cancelAnswer(calls[0].id, answer))
        #expect(fixture.core.callsRunning == ["data-1": 1, "data-2": 2])
        #expect(try fixture.startedCall(6).target == "data-1")
    }

    @Test func aTimedOutCallHoldsItsPlaceUntilItsWorkerAnswers() throws {
        var (fixture, calls) = try Self.fullFixture()
        _ = fixture.core.tick(now: fixture.t0 + .milliseconds(300))
        #expect(fixture.core.calls.isEmpty, "every call timed out")
        #expect(try Self.refusedBusy(&fixture, 5))

        let answered = fixture.fromWorker("data-2", try cancelAnswer(calls[1].id, IOCancelAnswer(task: .ended)),
                                          after: .milliseconds(301))
        #expect(try effectEvents(in: answered).map(\.phase) == [.failed])
        #expect(fixture.core.callsRunning == ["data-1": 2, "data-2": 1])
        #expect(try fixture.startedCall(6).target == "data-2")
    }

    @Test func anAnswerThatDoesNotDecodeStillFreesThePlace() throws {
        var (fixture, calls) = try Self.fullFixture()
        Self.cancel(2, in: &fixture)
        _ = fixture.fromWorker("data-2", WireMessage(Header(.ioCancelled, correlation: calls[1].id), address: "loader",
                                                     payload: Array(#"{"task":"vanished"}"#.utf8)))
        #expect(fixture.core.callsRunning == ["data-1": 2, "data-2": 1])
    }

    @Test func anAnswerFromAnotherWorkerFreesNothing() throws {
        var (fixture, calls) = try Self.fullFixture()
        Self.cancel(1, in: &fixture)
        _ = fixture.fromWorker("data-2", try cancelAnswer(calls[0].id, IOCancelAnswer(task: .ended)))
        #expect(fixture.core.callsRunning == ["data-1": 2, "data-2": 2])
        // Nor does a second answer from the right one.
        _ = fixture.fromWorker("data-1", try cancelAnswer(calls[0].id, IOCancelAnswer(task: .ended)))
        _ = fixture.fromWorker("data-1", try cancelAnswer(calls[0].id, IOCancelAnswer(task: .ended)))
        #expect(fixture.core.callsRunning == ["data-1": 1, "data-2": 2])
    }

    @Test func losingTheWorkerRunningCancelledCallsFreesTheirPlaces() throws {
        var (fixture, _) = try Self.fullFixture()
        Self.cancel(1, in: &fixture)
        Self.cancel(3, in: &fixture)
        _ = fixture.core.lose("data-1", reason: "killed", cause: .exited)
        #expect(fixture.core.callsRunning == ["data-2": 2])
        #expect(fixture.core.cancelling.isEmpty)

        fixture.register("data-1", after: .milliseconds(10))
        #expect(try fixture.startedCall(5).target == "data-1")
    }

    @Test func callsOfALostMachineWorkerHoldTheirPlacesAndArePublishedLostOnce() throws {
        var (fixture, calls) = try Self.fullFixture()
        let lost = fixture.core.lose("edge", reason: "killed", cause: .exited)
        #expect(try effectEvents(in: lost).map(\.phase) == [.lost, .lost, .lost, .lost])
        let cancels = lost.compactMap(\.sentToWorker).filter { $0.message.header.kind == .ioCancel }
        #expect(cancels.map(\.message.header.correlation) == calls.map(\.id), "in the order the calls started")
        #expect(fixture.core.callsRunning == ["data-1": 2, "data-2": 2])

        for call in calls {
            #expect(fixture.fromWorker(call.target, try cancelAnswer(call.id, IOCancelAnswer(task: .ended))) == [])
        }
        #expect(fixture.core.callsRunning == [:])
        #expect(fixture.core.cancelling.isEmpty)
    }
}
