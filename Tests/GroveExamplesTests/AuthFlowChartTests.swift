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
        (.authenticated(User(id: "a", name: "A", email: "a")), .startLogin),
        (.locked, .logout),
    ])
    func unhandledPairs(step: AuthFlow.Step, event: AuthFlow.Event) {
        var state = State(step: step)
        #expect(AuthFlowChart.step(&state, event: event).isUnhandled)
        #expect(state == State(step: step))
    }

    @Test("the code's events while a password or a code is checked are postponed; AuthFlow leaves them unhandled",
          arguments: [
              AuthFlow.Step.authenticating(email: "a"), .verifyingTwoFactor(token: "t", email: "a", code: "1"),
          ])
    func codeEventsPostponed(step: AuthFlow.Step) {
        for event: AuthFlow.Event in [.updateTwoFactorCode("2"), .submitTwoFactor] {
            var state = State(step: step)
            #expect(AuthFlowChart.step(&state, event: event).shape == .postpone, "\(event) in \(step)")
            #expect(state == State(step: step))
            #expect(AuthFlow.update(&state, event: event).isUnhandled, "\(event) in \(step)")
        }
    }

    /// Differs from AuthFlow on purpose (so not in `AuthFlowTests`' shared flows): AuthFlow
    /// drops a code sent before its prompt as unhandled, the chart keeps it for the prompt.
    @Test("a code typed and submitted before the service asks for it is entered and sent once it does")
    func earlyCodeWaitsForThePrompt() async throws {
        let logins = PendingCalls<Authenticate>()
        let verifications = PendingCalls<VerifyTwoFactor>()
        var io = IOHandlers()
        io.register(Authenticate.self) { try await logins.handle($0) }
        io.register(VerifyTwoFactor.self) { try await verifications.handle($0) }
        let email = grace.user.email
        let entering = State(step: .enteringCredentials(email: email, password: grace.password))
        let store = TestStore(AuthFlowChart.self, initialState: entering, io: io)
        await store.send(.login) { $0.step = .authenticating(email: email) }
        let login = try #require(await logins.next())
        await store.send(.updateTwoFactorCode("424242"))
        await store.send(.submitTwoFactor)
        #expect(await store.host.postponedEvents == [.updateTwoFactorCode("424242"), .submitTwoFactor])

        await login.succeed(.twoFactorRequired(token: "t"))
        await store.receive(.twoFactorRequired(token: "t")) { $0.step = .requiresTwoFactor(token: "t", email: email) }
        await store.receive(.updateTwoFactorCode("424242")) {
            $0.step = .enteringTwoFactor(token: "t", email: email, code: "424242")
        }
        await store.receive(.submitTwoFactor) { $0.step = .verifyingTwoFactor(token: "t", email: email, code: "424242") }
        #expect(await store.host.postponedEvents.isEmpty)
        let verification = try #require(await verifications.next())
        #expect(verification.request == VerifyTwoFactor(token: "t", code: "424242"))
        await verification.succeed(.verified(grace.user))
        await store.receive(.twoFactorVerified(grace.user)) { $0.step = .authenticated(self.grace.user) }
        await store.receiveOutput(.signedIn(grace.user))
        await store.finish()
    }

    @Test("a code sent early to a sign-in that needs none is dropped by the step it lands in")
    func earlyCodeDroppedWithoutASecondFactor() async throws {
        let logins = PendingCalls<Authenticate>()
        var io = IOHandlers()
        io.register(Authenticate.self) { try await logins.handle($0) }
        let ada = ExampleHandlers.demoAccounts[0]
        let entering = State(step: .enteringCredentials(email: ada.user.email, password: ada.password))
        let store = TestStore(AuthFlowChart.self, initialState: entering, io: io)
        await store.send(.login) { $0.step = .authenticating(email: ada.user.email) }
        let login = try #require(await logins.next())
        await store.send(.updateTwoFactorCode("123456"))
        await store.send(.submitTwoFactor)
        await login.succeed(.authenticated(ada.user))
        await store.receive(.authenticationSucceeded(ada.user)) { $0.step = .authenticated(ada.user) }
        await store.receiveUnhandled(.updateTwoFactorCode("123456"))
        await store.receiveUnhandled(.submitTwoFactor)
        #expect(await store.host.postponedEvents.isEmpty)
        await store.receiveOutput(.signedIn(ada.user))
        await store.finish()
    }

    @Test("another code submitted while one is checked is tried once the first is refused")
    func nextCodeWaitsForTheAnswer() async throws {
        let verifications = PendingCalls<VerifyTwoFactor>()
        var io = IOHandlers()
        io.register(VerifyTwoFactor.self) { try await verifications.handle($0) }
        let entering = State(step: .enteringTwoFactor(token: "t", email: "g@h.i", code: "000000"))
        let store = TestStore(AuthFlowChart.self, initialState: entering, io: io)
        await store.send(.submitTwoFactor) { $0.step = .verifyingTwoFactor(token: "t", email: "g@h.i", code: "000000") }
        let first = try #require(await verifications.next())
        await store.send(.updateTwoFactorCode("424242"))
        await store.send(.submitTwoFactor)
        await first.succeed(.invalidCode(message: "wrong code"))
        await store.receive(.twoFactorFailed(.rejected(message: "wrong code"))) {
            $0.step = .requiresTwoFactor(token: "t", email: "g@h.i")
            $0.failedAttempts = 1
        }
        await store.receive(.updateTwoFactorCode("424242")) {
            $0.step = .enteringTwoFactor(token: "t", email: "g@h.i", code: "424242")
        }
        await store.receive(.submitTwoFactor) { $0.step = .verifyingTwoFactor(token: "t", email: "g@h.i", code: "424242") }
        let second = try #require(await verifications.next())
        #expect(second.request == VerifyTwoFactor(token: "t", code: "424242"))
        await second.succeed(.verified(grace.user))
        await store.receive(.twoFactorVerified(grace.user)) {
            $0.step = .authenticated(self.grace.user)
            $0.failedAttempts = 0
        }
        await store.receiveOutput(.signedIn(grace.user))
        await store.finish()
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
