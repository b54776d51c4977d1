import Grove
import GroveExamples
import GroveRuntime
import GroveTesting
import Testing

/// What the port of AuthFlow to a statechart does beyond AuthFlow (whose flows `AuthFlowTests`
/// runs on both machines).
@Suite("AuthFlowChart", .timeLimit(.minutes(2)))
struct AuthFlowChartTests {
    private typealias State = AuthFlow.State
    private let grace = ExampleHandlers.demoAccounts[1]

    @Test("the key is the sign-in step's path")
    func keys() {
        #expect(AuthFlowChart.stateKey(State(step: .verifyingTwoFactor(token: "t", email: "e", code: "c")))
                    == "signingIn.twoFactor.verifying")
        #expect(AuthFlowChart.stateKey(State(step: .authenticating(email: "e"))) == "signingIn.authenticating")
        #expect(AuthFlowChart.stateKey(State()) == "signedOut")
        #expect(AuthFlowChart.parent(of: .verifying) == .twoFactor)
    }

    @Test("logout and accountLocked are the parent's: they reach it from every sign-in step", arguments: [
        AuthFlow.Step.enteringCredentials(email: "a", password: "p"), .authenticating(email: "a"),
        .authenticationFailed(email: "a", message: "m", canRetry: false), .requiresTwoFactor(token: "t", email: "a"),
        .enteringTwoFactor(token: "t", email: "a", code: "1"), .verifyingTwoFactor(token: "t", email: "a", code: "1"),
    ])
    func parentEvents(step: AuthFlow.Step) {
        var state = State(step: step, failedAttempts: 1)
        #expect(AuthFlowChart.update(&state, event: .logout).shape.flattened == [.cancelAll])
        #expect(state == State(step: .unauthenticated, failedAttempts: 1))
        state = State(step: step)
        #expect(AuthFlowChart.update(&state, event: .accountLocked).isNone)
        #expect(state.step == .locked)
    }

    @Test("AuthFlow's unhandled pairs are unhandled in the chart too", arguments: [
        (AuthFlow.Step.unauthenticated, AuthFlow.Event.logout),
        (.unauthenticated, .login),
        (.enteringCredentials(email: "a", password: "p"), .submitTwoFactor),
        (.authenticating(email: "a"), .login),
        (.authenticating(email: "a"), .twoFactorVerified(User(id: "a", name: "A", email: "a"))),
        (.requiresTwoFactor(token: "t", email: "a"), .submitTwoFactor),
        (.verifyingTwoFactor(token: "t", email: "a", code: "1"), .updateTwoFactorCode("2")),
        (.authenticated(User(id: "a", name: "A", email: "a")), .startLogin),
        (.locked, .logout),
    ])
    func unhandledPairs(step: AuthFlow.Step, event: AuthFlow.Event) {
        var state = State(step: step)
        #expect(AuthFlowChart.step(&state, event: event).isUnhandled)
        #expect(state == State(step: step))
    }

    @Test("a password the service does not answer in 30 s: the request is cancelled, and it does not count")
    func answerDeadline() async throws {
        let logins = PendingCalls<Authenticate>()
        var io = IOHandlers()
        io.register(Authenticate.self) { try await logins.handle($0) }
        let entering = State(step: .enteringCredentials(email: "a@b.c", password: "p"))
        let store = TestStore(AuthFlowChart.self, initialState: entering, io: io)
        await store.send(.login) { $0.step = .authenticating(email: "a@b.c") }
        let call = try #require(await logins.next())
        await store.advance(by: .seconds(29))
        await store.advance(by: .seconds(1))
        let late = AuthFlow.Failure.unavailable(message: "the service did not answer in time", canRetry: true)
        await store.receive(.authenticationFailed(late)) {
            $0.step = .authenticationFailed(email: "a@b.c", message: "the service did not answer in time", canRetry: true)
        }
        #expect(await call.cancellation(), "leaving authenticating cancels the request (its exit action)")
        await store.finish()
    }

    @Test("the second factor's five minutes survive moves between its steps, then the sign-in is abandoned")
    func codeDeadlineSurvivesSteps() async {
        let store = TestStore(AuthFlowChart.self, io: ExampleHandlers.inMemory())
        let email = grace.user.email
        let token = "2fa-\(grace.user.id)-1"
        await store.send(.startLogin) { $0.step = .enteringCredentials(email: "", password: "") }
        await store.send(.updateEmail(email)) { $0.step = .enteringCredentials(email: email, password: "") }
        await store.send(.updatePassword(grace.password)) {
            $0.step = .enteringCredentials(email: email, password: self.grace.password)
        }
        await store.send(.login) { $0.step = .authenticating(email: email) }
        await store.receive(.twoFactorRequired(token: token)) { $0.step = .requiresTwoFactor(token: token, email: email) }
        await store.advance(by: .seconds(200))
        await store.send(.updateTwoFactorCode("000000")) {
            $0.step = .enteringTwoFactor(token: token, email: email, code: "000000")
        }
        await store.send(.submitTwoFactor) { $0.step = .verifyingTwoFactor(token: token, email: email, code: "000000") }
        await store.receive(.twoFactorFailed(.rejected(message: "wrong code"))) {
            $0.step = .requiresTwoFactor(token: token, email: email)
            $0.failedAttempts = 1
        }
        await store.advance(by: .seconds(99))
        await store.advance(by: .seconds(1))
        await store.receive(.logout) { $0.step = .unauthenticated }
        await store.finish()
    }

    @Test("verifying's enter action sends the code on every way in: a submit, and a submit after an unreachable service")
    func verifyOnEveryEntry() async throws {
        let verifications = PendingCalls<VerifyTwoFactor>()
        var io = IOHandlers()
        io.register(VerifyTwoFactor.self) { try await verifications.handle($0) }
        let entering = State(step: .enteringTwoFactor(token: "t", email: "g@h.i", code: "424242"))
        let store = TestStore(AuthFlowChart.self, initialState: entering, io: io)
        await store.send(.submitTwoFactor) { $0.step = .verifyingTwoFactor(token: "t", email: "g@h.i", code: "424242") }
        let first = try #require(await verifications.next())
        await first.fail(IOFailure(.handlerFailed, "timeout"))
        await store.receive(.twoFactorFailed(.unavailable(message: "timeout", canRetry: true))) {
            $0.step = .enteringTwoFactor(token: "t", email: "g@h.i", code: "424242")
        }
        await store.send(.submitTwoFactor) { $0.step = .verifyingTwoFactor(token: "t", email: "g@h.i", code: "424242") }
        let second = try #require(await verifications.next())
        #expect(second.request == VerifyTwoFactor(token: "t", code: "424242"))
        await second.succeed(.verified(grace.user))
        await store.receive(.twoFactorVerified(grace.user)) { $0.step = .authenticated(self.grace.user) }
        await store.receiveOutput(.signedIn(grace.user))
        await store.finish()
    }
}
