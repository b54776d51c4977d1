import Grove
import GroveRuntime
import GroveTesting
import Synchronization
import Testing

/// A small machine for exercising the test store itself. Not private: its outputs print with
/// their module-qualified type name in the store's messages, which the tests spell out.
enum Pinger: Machine {
    enum Event: Equatable, Sendable { case ping, chain, pong, hang, wait(seconds: Int), ignored, sneaky, ring }
    enum Output: Equatable, Sendable { case rang(Int) }
    struct Env: Sendable { var hang: @Sendable () async -> Void }
    static var initialState: Int { 0 }
    static func update(_ state: inout Int, event: Event) -> Effect {
        switch event {
        case .ping:
            state += 1
            return .task { _ in .pong }
        case .ignored:
            return .unhandled
        case .sneaky:
            state += 100
            return .unhandled
        case .chain:
            state += 1
            return .events(.pong)
        case .pong:
            state += 10
            return .none
        case .hang:
            return .task(id: "hang") { env in
                await env.hang()
                return nil
            }
        case .wait(let seconds):
            return .after(.seconds(seconds), id: "wait", send: .pong)
        case .ring:
            return .output(.rang(state))
        }
    }
}

/// A machine whose state has several fields, for the diff a mismatch prints: a visit counts
/// and tags, a rename echoes the new name as an event of its own.
enum Visits: Machine {
    struct State: Equatable, Sendable {
        var name = "Ada"
        var visits = 0
        var tags: [String] = ["first"]
    }
    enum Event: Equatable, Sendable { case visit(tag: String), rename(String), renamed(String) }
    static var initialState: State { State() }
    static func update(_ state: inout State, event: Event) -> Effect {
        switch event {
        case .visit(let tag):
            state.visits += 1
            state.tags.append(tag)
            return .none
        case .rename(let name):
            return .events(.renamed(name))
        case .renamed(let name):
            state.name = name
            return .none
        }
    }
}

/// What a store reported, in order: its tests assert exactly these instead of letting them
/// fail the test, so a store that reports too little, too much or the wrong thing fails here.
final class Reported: Sendable {
    private let issues = Mutex<[(message: String, line: Int)]>([])

    var messages: [String] { issues.withLock { $0.map(\.message) } }
    var lines: [Int] { issues.withLock { $0.map(\.line) } }

    func record(_ message: String, _ sourceLocation: SourceLocation) {
        issues.withLock { $0.append((message, sourceLocation.line)) }
    }
}

@Suite("Test store", .timeLimit(.minutes(2)))
struct TestStoreTests {
    /// Runs until cancelled (the host cancels it when it stops): an effect that outlives the test.
    /// It ends on cancellation instead of dropping a continuation, which the runtime reports as
    /// misuse on stderr.
    private let neverEnds = Pinger.Env { try? await Task.sleep(for: .seconds(3600)) }

    private func store(_ reported: Reported, timeout: Duration? = nil,
                       sourceLocation: SourceLocation = #_sourceLocation) -> TestStore<Pinger> {
        let store = TestStore(Pinger.self, env: neverEnds, reportIssue: { reported.record($0, $1) },
                              sourceLocation: sourceLocation)
        if let timeout { store.timeout = timeout }
        return store
    }

    @Test("A complete, exhaustive test passes")
    func exhaustiveTestPasses() async {
        // The default reporter: any issue it recorded would fail this test.
        let store = TestStore(Pinger.self, env: neverEnds)
        await store.send(.ping) { $0 = 1 }
        await store.receive(.pong) { $0 = 11 }
        await store.send(.ring)
        await store.receiveOutput(.rang(11))
        await store.finish()
    }

    @Test("A passing test reports nothing to an injected reporter")
    func passingTestReportsNothing() async {
        let reported = Reported()
        let store = store(reported)
        await store.send(.chain) { $0 = 1 }
        await store.receive(.pong) { $0 = 11 }
        await store.sendUnhandled(.ignored)
        await store.finish()
        #expect(reported.messages == [])
    }

    @Test("Scenario 20: the test store fails a test that leaves an effect running")
    func failsWhenEffectLeftRunning() async {
        let reported = Reported()
        let store = store(reported, timeout: .milliseconds(100))
        await store.send(.hang)
        await store.finish(); let line = #line
        #expect(reported.messages == [
            "effects still running at the end of the test: hang. Cancel them from the machine, "
                + "advance the clock past their timers, or receive their results",
        ])
        #expect(reported.lines == [line])
    }

    @Test("Scenario 20: the test store fails a test that leaves a timer pending")
    func failsWhenTimerPending() async {
        let reported = Reported()
        let store = store(reported, timeout: .milliseconds(50))
        await store.send(.wait(seconds: 5))
        await store.finish()
        #expect(reported.messages == [
            "effects still running at the end of the test: wait. Cancel them from the machine, "
                + "advance the clock past their timers, or receive their results",
        ])
    }

    @Test("Scenario 20: the test store fails a test that leaves a received event unasserted")
    func failsWhenEventUnasserted() async {
        let reported = Reported()
        let store = store(reported)
        await store.send(.ping) { $0 = 1 }
        await store.finish()
        #expect(reported.messages == ["events processed but not received by the test: pong"])
    }

    @Test("Scenario 20: the test store fails when the asserted state is wrong")
    func failsOnWrongState() async {
        let reported = Reported()
        let store = store(reported)
        await store.send(.ping) { $0 = 2 }; let line = #line
        await store.receive(.pong) { $0 = 11 }
        await store.finish()
        #expect(reported.messages == ["state after ping differs from the expected one (- expected, + actual):\n  - 2\n  + 1"])
        #expect(reported.lines == [line])
    }

    /// As TCA's: the fields that differ, marked, among those that do not (a field equal on both
    /// sides and holding more is folded to `[…]`), rather than both states whole.
    @Test("A wrong expected state is reported as a field-by-field diff")
    func wrongStateIsReportedAsADiff() async {
        let reported = Reported()
        let store = TestStore(Visits.self, reportIssue: { reported.record($0, $1) })
        await store.send(.visit(tag: "door")) {
            $0.visits = 2
            $0.tags.append("door")
        }
        await store.send(.rename("Grace"))
        await store.receive(.renamed("Grace")) { $0.name = "Grâce" }
        await store.finish()
        #expect(reported.messages == [
            """
            state after visit(tag: "door") differs from the expected one (- expected, + actual):
                Visits.State(
                  name: "Ada",
              -   visits: 2,
              +   visits: 1,
                  tags: […]
                )
            """,
            """
            state after renamed("Grace") differs from the expected one (- expected, + actual):
                Visits.State(
              -   name: "Grâce",
              +   name: "Grace",
                  visits: 1,
                  tags: […]
                )
            """,
        ])
    }

    /// What the default reporter records: the diff is in the issue a failing test shows.
    @Test("The issue a mismatch records holds the diff")
    func recordedIssueHoldsTheDiff() async {
        await withKnownIssue {
            let store = TestStore(Visits.self)
            await store.send(.visit(tag: "door")) { $0.tags.append("door") }
            await store.finish()
        } matching: { issue in
            let comment = issue.comments.map(\.rawValue).joined(separator: "\n")
            return comment.contains("\n  -   visits: 0,\n  +   visits: 1,\n")
                && comment.contains("(- expected, + actual):") && !comment.contains("tags: [\n  -")
        }
    }

    @Test("Scenario 20: the test store fails when sending before receiving what arrived")
    func failsWhenSendingBeforeReceiving() async {
        let reported = Reported()
        let store = store(reported)
        await store.send(.chain) { $0 = 1 }
        await store.send(.pong) { $0 = 21 }
        await store.finish()
        #expect(reported.messages == [
            "must receive pong before sending pong: the machine processed it and the test did not assert it",
        ])
    }

    @Test("The test store fails when the event received is not the one expected")
    func failsOnWrongEventReceived() async {
        let reported = Reported()
        let store = store(reported)
        await store.send(.ping) { $0 = 1 }
        await store.receive(.chain) { $0 = 2 }
        await store.finish()
        #expect(reported.messages == [
            "expected to receive chain, but received pong (- expected, + received):\n  - Pinger.Event.chain\n  + Pinger.Event.pong",
        ])
        #expect(store.state == 11, "the store moves on to the state the machine committed")
    }

    @Test("The test store fails when nothing arrives to receive")
    func failsWhenReceiveTimesOut() async {
        let reported = Reported()
        let store = store(reported, timeout: .milliseconds(50))
        await store.send(.pong) { $0 = 10 }
        await store.receive(.pong) { $0 = 20 }
        await store.finish()
        #expect(reported.messages == ["expected to receive pong, but nothing arrived within 0.05 seconds"])
    }

    @Test("The test store fails a test that leaves an output unreceived")
    func failsWhenOutputNotReceived() async {
        let reported = Reported()
        let store = store(reported)
        await store.send(.ring)
        await store.finish()
        #expect(reported.messages == ["outputs emitted but not received by the test: [GroveTestingTests.Pinger.Output.rang(0)]"])
    }

    @Test("The test store fails when the output is not the one expected")
    func failsOnWrongOutput() async {
        let reported = Reported()
        let store = store(reported)
        await store.send(.ring)
        await store.receiveOutput(.rang(1))
        await store.finish()
        #expect(reported.messages == [
            "expected output rang(1), but the machine emitted rang(0) (- expected, + emitted):\n"
                + "  - Pinger.Output.rang(1)\n  + Pinger.Output.rang(0)",
        ])
    }

    @Test("The test store fails when no output arrives")
    func failsWhenNoOutputArrives() async {
        let reported = Reported()
        let store = store(reported, timeout: .milliseconds(50))
        await store.send(.pong) { $0 = 10 }
        await store.receiveOutput(.rang(10))
        await store.finish()
        #expect(reported.messages == ["expected output rang(10), but none arrived within 0.05 seconds"])
    }

    @Test("The test store fails when send meets an event the machine does not handle")
    func failsWhenSentEventIsUnhandled() async {
        let reported = Reported()
        let store = store(reported)
        await store.send(.ignored)
        await store.finish()
        #expect(reported.messages == ["ignored is unhandled in state 0; use sendUnhandled(_:) when that is expected"])
    }

    @Test("The test store fails when sendUnhandled meets an event the machine handles")
    func failsWhenUnhandledEventIsHandled() async {
        let reported = Reported()
        let store = store(reported)
        await store.sendUnhandled(.pong)
        await store.finish()
        #expect(reported.messages == ["expected pong to be unhandled, but the machine handled it (- before, + after):\n  - 0\n  + 10"])
    }

    @Test("Scenario 17: sendUnhandled passes for an event the machine does not handle")
    func unhandledEventPasses() async {
        let store = TestStore(Pinger.self, env: neverEnds)
        await store.sendUnhandled(.ignored)
        await store.finish()
    }

    @Test("Scenario 17: the test store fails a machine that changes the state and returns .unhandled")
    func failsWhenUnhandledChangesState() async {
        let reported = Reported()
        let store = store(reported)
        await store.sendUnhandled(.sneaky)
        await store.finish()
        #expect(reported.messages == [
            "update returned .unhandled for sneaky but changed the state; an unhandled transition must leave it untouched "
                + "(- before, + after):\n  - 0\n  + 100",
        ])
    }

    @Test("The test store fails a test that never calls finish")
    func failsWhenNotFinished() async {
        let reported = Reported()
        var line = 0
        do {
            line = #line; let store = store(reported)
            await store.send(.pong) { $0 = 10 }
        }
        #expect(reported.messages == [
            "TestStore was never finished: call `await store.finish()` at the end of the test "
                + "so it can check that no effect is left running",
        ])
        #expect(reported.lines == [line], "reported where the store was made")
    }

    @Test("Advancing the test clock fires timers without sleeping")
    func advancingFiresTimers() async {
        let store = TestStore(Pinger.self, env: neverEnds)
        await store.send(.wait(seconds: 3600))
        await store.advance(by: .seconds(3600))
        await store.receive(.pong) { $0 = 10 }
        await store.finish()
    }
}
