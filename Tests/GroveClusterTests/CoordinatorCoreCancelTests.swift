@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
import GroveWire
import Testing

/// The `io-cancelled` the worker running call `id` sends.
func cancelAnswer(_ id: UInt64, _ answer: IOCancelAnswer) throws -> WireMessage {
    WireMessage(Header(.ioCancelled, correlation: id), address: "loader", payload: try WireJSON.encode(answer))
}

extension CoreFixture {
    /// Starts call `originID` from `edge` and has `edge` cancel it; returns where it runs.
    mutating func cancelledCall(_ originID: UInt64, reason: String = "cancelled") throws -> (target: String, id: UInt64) {
        let call = try startedCall(originID)
        let forwarded = fromWorker("edge", WireMessage(Header(.ioCancel, correlation: originID), address: "loader",
                                                       payload: Array(#"{"reason":"\#(reason)"}"#.utf8)))
        #expect(forwarded == [.toWorker(call.target, WireMessage(Header(.ioCancel, correlation: call.id), address: "loader"))])
        return call
    }
}

/// A cancelled io call is published `cancelled` once the worker running it says its task ended
/// (`io-cancelled`), or once that worker is lost.
@Suite("CoordinatorCore: acknowledged cancels", .timeLimit(.minutes(2)))
struct CoordinatorCoreCancelTests {
    @Test func cancelledIsPublishedWhenTheTargetSaysTheTaskEnded() throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        let call = try fixture.startedCall(7)
        _ = fixture.fromWorker("edge", WireMessage(Header(.ioCancel, correlation: 7), address: "loader",
                                                   payload: Array(#"{"reason":"replaced"}"#.utf8)))
        #expect(fixture.core.cancelling.keys.sorted() == [call.id])

        let answer = try cancelAnswer(call.id, IOCancelAnswer(task: .ended, endedAtNs: 123_456))
        let actions = fixture.fromWorker(call.target, answer)
        #expect(try effectEvents(in: actions) == [
            EffectEvent(address: "loader", effect: .string("fetch-7"), request: "FetchData", worker: call.target, phase: .cancelled,
                        reason: "replaced", task: .ended, taskEndedAtNs: 123_456),
        ])
        #expect(actions.count == 1, "nothing goes to the machine's worker: it stopped waiting at its cancel")
        #expect(fixture.core.cancelling.isEmpty)
        // Said once: a second answer is ignored.
        #expect(fixture.fromWorker(call.target, answer) == [])
    }

    @Test func whatTheTargetSaidOfAFinishedOrUnknownTaskIsPublished() throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        let finished = try fixture.startedCall(7)
        let unknown = try fixture.startedCall(8)
        for origin: UInt64 in [7, 8] {
            _ = fixture.fromWorker("edge", WireMessage(Header(.ioCancel, correlation: origin), address: "loader"))
        }
        let first = fixture.fromWorker(finished.target, try cancelAnswer(finished.id, IOCancelAnswer(task: .finished)))
        let second = fixture.fromWorker(unknown.target, try cancelAnswer(unknown.id, IOCancelAnswer(task: .unknown)))
        let events = try effectEvents(in: first + second)
        #expect(events.map(\.task) == [.finished, .unknown])
        #expect(events.map(\.reason) == ["cancelled", "cancelled"])
        #expect(events.map(\.taskEndedAtNs) == [nil, nil])
    }

    @Test func onlyTheTargetMayAnswerACancel() throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        let call = try fixture.startedCall(7)
        _ = fixture.fromWorker("edge", WireMessage(Header(.ioCancel, correlation: 7), address: "loader"))
        let stranger = call.target == "data-1" ? "data-2" : "data-1"
        // Refused, each sender told why (issue 34); nothing published, the call still cancelling.
        for sender in [stranger, "edge"] {
            let refused = fixture.fromWorker(sender, try cancelAnswer(call.id, IOCancelAnswer(task: .ended)))
            let told = refused.compactMap(\.sentToWorker).map(\.worker)
            #expect(told == [sender] && refused.compactMap(\.published).isEmpty, "\(refused)")
        }
        // An answer for a call never cancelled is ignored too.
        let running = try fixture.startedCall(9)
        #expect(fixture.fromWorker(running.target, try cancelAnswer(running.id, IOCancelAnswer(task: .ended))) == [])
        #expect(fixture.core.cancelling.keys.sorted() == [call.id])
        #expect(fixture.core.calls.keys.sorted() == [running.id])
    }

    @Test func anAnswerThatDoesNotDecodeIsWarnedAboutAndStillPublished() throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        let call = try fixture.startedCall(7)
        _ = fixture.fromWorker("edge", WireMessage(Header(.ioCancel, correlation: 7), address: "loader"))
        let actions = fixture.fromWorker(call.target, WireMessage(Header(.ioCancelled, correlation: call.id), address: "loader",
                                                                   payload: Array(#"{"task":"vanished"}"#.utf8)))
        let warnings = actions.compactMap { action -> String? in
            if case .warn(let text) = action { text } else { nil }
        }
        #expect(warnings.count == 1)
        #expect(warnings.first?.contains("not an io-cancelled answer") == true, "\(warnings)")
        let events = try effectEvents(in: actions)
        #expect(events.map(\.phase) == [.cancelled])
        #expect(events.map(\.task) == [nil])
    }

    @Test func cancelWithoutAReasonSaysCancelled() throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        let call = try fixture.startedCall(9)
        _ = fixture.fromWorker("edge", WireMessage(Header(.ioCancel, correlation: 9), address: "loader"))
        let actions = fixture.fromWorker(call.target, try cancelAnswer(call.id, IOCancelAnswer(task: .ended)))
        #expect(try effectEvents(in: actions).map(\.reason) == ["cancelled"])
    }

    @Test func theTargetLostBeforeItAnswersIsPublishedAsCancelledWithWorkerLost() throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        let calls = try (1...4).map { try fixture.cancelledCall(UInt64($0), reason: "replaced") }
        let onData1 = calls.filter { $0.target == "data-1" }
        #expect(onData1.count == 2)

        let actions = fixture.core.lose("data-1", reason: "no heartbeat", cause: .silent)
        let events = try effectEvents(in: actions)
        #expect(events.map(\.phase) == [.cancelled, .cancelled])
        #expect(events.map(\.effect) == [.string("fetch-1"), .string("fetch-3")], "in the order the cancels went")
        #expect(events.map(\.task) == [.workerLost, .workerLost])
        #expect(events.map(\.worker) == ["data-1", "data-1"])
        #expect(events.map(\.taskEndedAtNs) == [nil, nil])
        #expect(Set(events.map(\.reason)) == ["replaced; worker data-1 was lost (no heartbeat) before it said the task ended"])
        // Nothing goes to the machine's worker: it stopped waiting when it cancelled.
        #expect(actions.compactMap(\.sentToWorker).isEmpty)
        // The calls cancelled on data-2 still wait for data-2's answer.
        let onData2 = calls.filter { $0.target == "data-2" }.map(\.id).sorted()
        #expect(fixture.core.cancelling.keys.sorted() == onData2)
        // A late answer from the lost worker is ignored (it must register again anyway).
        #expect(fixture.core.cancelling[onData1[0].id] == nil)
    }

    @Test func losingTheMachinesWorkerLeavesCancelsWaitingForTheirAnswer() throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        let call = try fixture.cancelledCall(1)
        let actions = fixture.core.lose("edge", reason: "exited", cause: .exited)
        #expect(try effectEvents(in: actions).isEmpty, "the cancel was the machine's; its task's end is still to come")
        let answered = fixture.fromWorker(call.target, try cancelAnswer(call.id, IOCancelAnswer(task: .ended, endedAtNs: 9)))
        #expect(try effectEvents(in: answered).map(\.task) == [.ended])
    }

    @Test func theOneWayToCancelACallTakesItOutOfFlight() throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        let call = try fixture.startedCall(1)
        let actions = fixture.core.cancel(call.id, reason: "timeout")
        #expect(actions == [.toWorker(call.target, WireMessage(Header(.ioCancel, correlation: call.id), address: "loader"))])
        #expect(fixture.core.calls.isEmpty)
        #expect(fixture.core.callsByOrigin["edge"]?.isEmpty ?? true)
        #expect(fixture.core.cancel(call.id, reason: "timeout") == [], "once only")
        let answered = fixture.fromWorker(call.target, try cancelAnswer(call.id, IOCancelAnswer(task: .ended)))
        #expect(try effectEvents(in: answered).map(\.reason) == ["timeout"])
    }
}
