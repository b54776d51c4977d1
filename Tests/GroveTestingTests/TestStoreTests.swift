import Testing
import Grove
import GroveRuntime
import GroveTesting

/// A small machine for exercising the test store itself.
private enum Pinger: Machine {
    enum Event: Equatable, Sendable { case ping, chain, pong, hang, wait(seconds: Int), ignored, sneaky }
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
        }
    }
}

@Suite("Test store")
struct TestStoreTests {
    /// Runs until cancelled (the host cancels it when it stops): an effect that outlives the test.
    /// It ends on cancellation instead of dropping a continuation, which the runtime reports as
    /// misuse on stderr.
    private let neverEnds = Pinger.Env { try? await Task.sleep(for: .seconds(3600)) }

    @Test("A complete, exhaustive test passes")
    func exhaustiveTestPasses() async {
        let store = TestStore(Pinger.self, env: neverEnds)
        await store.send(.ping) { $0 = 1 }
        await store.receive(.pong) { $0 = 11 }
        await store.finish()
    }

    @Test("Scenario 20: the test store fails a test that leaves an effect running")
    func failsWhenEffectLeftRunning() async {
        await withKnownIssue {
            let store = TestStore(Pinger.self, env: neverEnds)
            store.timeout = .milliseconds(100)
            await store.send(.hang)
            await store.finish()
        } matching: { issue in
            issue.comments.contains { $0.rawValue.contains("effects still running") && $0.rawValue.contains("hang") }
        }
    }

    @Test("Scenario 20: the test store fails a test that leaves a timer pending")
    func failsWhenTimerPending() async {
        await withKnownIssue {
            let store = TestStore(Pinger.self, env: neverEnds)
            store.timeout = .milliseconds(50)
            await store.send(.wait(seconds: 5))
            await store.finish()
        } matching: { $0.comments.contains { $0.rawValue.contains("wait") } }
    }

    @Test("Scenario 20: the test store fails a test that leaves a received event unasserted")
    func failsWhenEventUnasserted() async {
        await withKnownIssue {
            let store = TestStore(Pinger.self, env: neverEnds)
            await store.send(.ping) { $0 = 1 }
            await store.finish()
        } matching: { $0.comments.contains { $0.rawValue.contains("not received") && $0.rawValue.contains("pong") } }
    }

    @Test("Scenario 20: the test store fails when the asserted state is wrong")
    func failsOnWrongState() async {
        await withKnownIssue {
            let store = TestStore(Pinger.self, env: neverEnds)
            await store.send(.ping) { $0 = 2 }
            await store.receive(.pong) { $0 = 11 }
            await store.finish()
        } matching: { $0.comments.contains { $0.rawValue.contains("differs from the expected") } }
    }

    @Test("Scenario 20: the test store fails when sending before receiving what arrived")
    func failsWhenSendingBeforeReceiving() async {
        await withKnownIssue {
            let store = TestStore(Pinger.self, env: neverEnds)
            await store.send(.chain) { $0 = 1 }
            await store.send(.pong) { $0 = 21 }
            await store.finish()
        } matching: { $0.comments.contains { $0.rawValue.contains("must receive pong") } }
    }

    @Test("Scenario 17: sendUnhandled passes for an event the machine does not handle")
    func unhandledEventPasses() async {
        let store = TestStore(Pinger.self, env: neverEnds)
        await store.sendUnhandled(.ignored)
        await store.finish()
    }

    @Test("Scenario 17: the test store fails a machine that changes the state and returns .unhandled")
    func failsWhenUnhandledChangesState() async {
        await withKnownIssue {
            let store = TestStore(Pinger.self, env: neverEnds)
            await store.sendUnhandled(.sneaky)
            await store.finish()
        } matching: { $0.comments.contains { $0.rawValue.contains("returned .unhandled for sneaky but changed the state") } }
    }

    @Test("The test store fails a test that never calls finish")
    func failsWhenNotFinished() async {
        await withKnownIssue {
            let store = TestStore(Pinger.self, env: neverEnds)
            await store.send(.pong) { $0 = 10 }
        } matching: { $0.comments.contains { $0.rawValue.contains("never finished") } }
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
