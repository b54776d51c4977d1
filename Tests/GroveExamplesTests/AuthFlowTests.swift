import Grove
import GroveExamples
import GroveRuntime
import GroveTesting
import Testing

@Suite("AuthFlow", .timeLimit(.minutes(2)))
struct AuthFlowTests {
    private typealias State = AuthFlow.State
    private let ada = ExampleHandlers.demoAccounts[0]
    private let grace = ExampleHandlers.demoAccounts[1]

    // MARK: Pure transitions

    @Test("entering credentials and logging in sends them to the service; the state forgets the password")
    func loginSendsCredentials() {
        var state = AuthFlow.initialState
        #expect(AuthFlow.update(&state, event: .startLogin).isNone)
        #expect(AuthFlow.update(&state, event: .updateEmail("ada@example.com")).isNone)
        #expect(AuthFlow.update(&state, event: .updatePassword("secret")).isNone)
        #expect(state == State(step: .enteringCredentials(email: "ada@example.com", password: "secret")))

        let effect = AuthFlow.update(&state, event: .login)
        #expect(state == State(step: .authenticating(email: "ada@example.com")))
        #expect(effect.shape.flattened == [.io(id: AuthFlow.authenticateID, Authenticate(email: "ada@example.com", password: "secret"))])
    }

    @Test("a rejected password counts; the last allowed failure locks the account and ends the run")
    func rejectionsCountToLockout() {
        var state = State(step: .authenticating(email: "a@b.c"), maxAttempts: 2)
        #expect(AuthFlow.update(&state, event: .authenticationFailed(.rejected(message: "wrong"))).isNone)
        #expect(state == State(step: .authenticationFailed(email: "a@b.c", message: "wrong", canRetry: true),
                               failedAttempts: 1, maxAttempts: 2))
        #expect(!state.isTerminal)

        #expect(AuthFlow.update(&state, event: .retry).isNone)
        #expect(state.step == .enteringCredentials(email: "a@b.c", password: ""), "retry keeps the email")
        _ = AuthFlow.update(&state, event: .login)
        _ = AuthFlow.update(&state, event: .authenticationFailed(.rejected(message: "wrong")))
        #expect(state == State(step: .locked, failedAttempts: 2, maxAttempts: 2))
        #expect(state.isTerminal)
        #expect(AuthFlow.update(&state, event: .logout).isUnhandled)
    }

    @Test("an unreachable service does not count as an attempt; a permanent failure cannot be retried")
    func unavailableDoesNotCount() {
        var state = State(step: .authenticating(email: "a@b.c"), failedAttempts: 1)
        _ = AuthFlow.update(&state, event: .authenticationFailed(.unavailable(message: "no handler", canRetry: false)))
        #expect(state == State(step: .authenticationFailed(email: "a@b.c", message: "no handler", canRetry: false),
                               failedAttempts: 1))
        #expect(AuthFlow.update(&state, event: .retry).isUnhandled)
        #expect(state.step == .authenticationFailed(email: "a@b.c", message: "no handler", canRetry: false))
    }

    @Test("the service can lock the account at once")
    func serviceLocks() {
        var state = State(step: .authenticating(email: "a@b.c"))
        #expect(AuthFlow.update(&state, event: .accountLocked).isNone)
        #expect(state == State(step: .locked))
    }

    @Test("a second factor: code entry, verification request, success resets the failure count")
    func twoFactorSuccess() {
        var state = State(step: .authenticating(email: "g@h.i"), failedAttempts: 1)
        _ = AuthFlow.update(&state, event: .twoFactorRequired(token: "t1"))
        #expect(state == State(step: .requiresTwoFactor(token: "t1", email: "g@h.i"), failedAttempts: 1))
        _ = AuthFlow.update(&state, event: .updateTwoFactorCode("12"))
        _ = AuthFlow.update(&state, event: .updateTwoFactorCode("1234"))
        #expect(state.step == .enteringTwoFactor(token: "t1", email: "g@h.i", code: "1234"))

        let effect = AuthFlow.update(&state, event: .submitTwoFactor)
        #expect(state.step == .verifyingTwoFactor(token: "t1", email: "g@h.i", code: "1234"))
        #expect(effect.shape.flattened == [.io(id: AuthFlow.verifyID, VerifyTwoFactor(token: "t1", code: "1234"))])

        let user = User(id: "g", name: "G", email: "g@h.i")
        #expect(AuthFlow.update(&state, event: .twoFactorVerified(user)).shape == .output(.signedIn(user)))
        #expect(state == State(step: .authenticated(user), failedAttempts: 0))
    }

    @Test("signedIn is emitted exactly on a successful sign-in, with or without a second factor, never on failure")
    func signedInOnlyOnSuccess() {
        let user = User(id: "a", name: "A", email: "a@b.c")
        let credentials: [AuthFlow.Event] = [.startLogin, .updateEmail("a@b.c"), .updatePassword("p"), .login]

        // Password only: the success, and nothing before it, emits the output.
        var state = AuthFlow.initialState
        var outputs = Self.outputs(&state, credentials + [.authenticationSucceeded(user)])
        #expect(outputs == Array(repeating: [], count: credentials.count) + [[.signedIn(user)]])

        // Second factor: the verified code emits it, the password alone does not.
        state = AuthFlow.initialState
        let twoFactor: [AuthFlow.Event] = credentials + [
            .twoFactorRequired(token: "t"), .updateTwoFactorCode("1234"), .submitTwoFactor,
        ]
        outputs = Self.outputs(&state, twoFactor + [.twoFactorVerified(user)])
        #expect(outputs == Array(repeating: [], count: twoFactor.count) + [[.signedIn(user)]])
        #expect(state.step == .authenticated(user))

        // Failures, lockouts and successes out of place emit nothing.
        let silent: [(AuthFlow.Step, AuthFlow.Event)] = [
            (.authenticating(email: "a@b.c"), .authenticationFailed(.rejected(message: "wrong"))),
            (.authenticating(email: "a@b.c"), .authenticationFailed(.unavailable(message: "down", canRetry: true))),
            (.authenticating(email: "a@b.c"), .accountLocked),
            (.verifyingTwoFactor(token: "t", email: "a@b.c", code: "0"), .twoFactorFailed(.rejected(message: "wrong"))),
            (.verifyingTwoFactor(token: "t", email: "a@b.c", code: "0"),
             .twoFactorFailed(.unavailable(message: "down", canRetry: true))),
            (.verifyingTwoFactor(token: "t", email: "a@b.c", code: "0"), .accountLocked),
            (.authenticating(email: "a@b.c"), .twoFactorVerified(user)),
            (.unauthenticated, .authenticationSucceeded(user)),
            (.authenticated(user), .authenticationSucceeded(user)),
            (.authenticated(user), .logout),
        ]
        for (step, event) in silent {
            var single = State(step: step, maxAttempts: 1)
            #expect(Self.outputs(&single, [event]) == [[]], "\(event) in \(step)")
        }
    }

    @Test("a wrong code counts and asks for a new one; an unreachable service keeps the code")
    func twoFactorFailures() {
        var state = State(step: .verifyingTwoFactor(token: "t1", email: "g@h.i", code: "0000"))
        _ = AuthFlow.update(&state, event: .twoFactorFailed(.rejected(message: "wrong code")))
        #expect(state == State(step: .requiresTwoFactor(token: "t1", email: "g@h.i"), failedAttempts: 1))

        state = State(step: .verifyingTwoFactor(token: "t1", email: "g@h.i", code: "0000"), failedAttempts: 1)
        _ = AuthFlow.update(&state, event: .twoFactorFailed(.unavailable(message: "timeout", canRetry: true)))
        #expect(state == State(step: .enteringTwoFactor(token: "t1", email: "g@h.i", code: "0000"), failedAttempts: 1))

        state = State(step: .verifyingTwoFactor(token: "t1", email: "g@h.i", code: "0000"), failedAttempts: 2)
        _ = AuthFlow.update(&state, event: .twoFactorFailed(.rejected(message: "wrong code")))
        #expect(state == State(step: .locked, failedAttempts: 3), "guessing codes locks the account too")
    }

    @Test("logout from any step but unauthenticated cancels all work and keeps the failure count",
          arguments: [
              AuthFlow.Step.enteringCredentials(email: "a", password: "p"),
              .authenticating(email: "a"),
              .requiresTwoFactor(token: "t", email: "a"),
              .enteringTwoFactor(token: "t", email: "a", code: "1"),
              .verifyingTwoFactor(token: "t", email: "a", code: "1"),
              .authenticated(User(id: "a", name: "A", email: "a")),
              .authenticationFailed(email: "a", message: "m", canRetry: true),
          ])
    func logoutCancelsAll(step: AuthFlow.Step) {
        var state = State(step: step, failedAttempts: 1)
        let effect = AuthFlow.update(&state, event: .logout)
        #expect(state == State(step: .unauthenticated, failedAttempts: 1))
        #expect(effect.shape.flattened == [.cancelAll])
    }

    @Test("events out of place are unhandled and change nothing", arguments: [
        (AuthFlow.Step.unauthenticated, AuthFlow.Event.logout),
        (.unauthenticated, .login),
        (.enteringCredentials(email: "a", password: "p"), .submitTwoFactor),
        (.authenticating(email: "a"), .login),
        (.authenticating(email: "a"), .twoFactorVerified(User(id: "a", name: "A", email: "a"))),
        (.requiresTwoFactor(token: "t", email: "a"), .submitTwoFactor),
        (.authenticated(User(id: "a", name: "A", email: "a")), .startLogin),
    ])
    func unhandledPairs(step: AuthFlow.Step, event: AuthFlow.Event) {
        var state = State(step: step)
        #expect(AuthFlow.update(&state, event: event).isUnhandled)
        #expect(state == State(step: step))
    }

    @Test("maxAttempts is at least 1")
    func maxAttemptsFloor() {
        #expect(State(maxAttempts: 0).maxAttempts == 1)
        #expect(AuthFlow.initialState.maxAttempts == AuthFlow.defaultMaxAttempts)
    }

    @Test("states and events survive a JSON round trip")
    func codableRoundTrip() throws {
        let user = User(id: "a", name: "A", email: "a@b.c")
        let states = [
            State(step: .verifyingTwoFactor(token: "t", email: "e", code: "c"), failedAttempts: 2, maxAttempts: 5),
            State(step: .authenticated(user)),
            State(step: .locked, failedAttempts: 3),
        ]
        let events: [AuthFlow.Event] = [
            .startLogin, .login, .authenticationFailed(.rejected(message: "m")),
            .twoFactorFailed(.unavailable(message: "m", canRetry: false)),
            .twoFactorRequired(token: "t"), .twoFactorVerified(user), .logout, .accountLocked,
        ]
        #expect(try roundTrip(states) == states)
        #expect(try roundTrip(events) == events)
        #expect(try roundTrip(Authenticate.Outcome.twoFactorRequired(token: "t")) == .twoFactorRequired(token: "t"))
    }

    // MARK: Flows through the test store, on AuthFlow and on its port AuthFlowChart

    @Test("signing in without a second factor, then logging out", arguments: AuthMachine.allCases)
    func signInAndLogOut(_ machine: AuthMachine) async {
        switch machine {
        case .flow: await signInAndLogOut(AuthFlow.self)
        case .chart: await signInAndLogOut(AuthFlowChart.self)
        }
    }

    private func signInAndLogOut<M: AuthFlowLike>(_: M.Type) async {
        let store = TestStore(M.self, io: ExampleHandlers.inMemory())
        await enterCredentials(store, email: ada.user.email, password: ada.password)
        await store.send(.login) { $0.step = .authenticating(email: self.ada.user.email) }
        await store.receive(.authenticationSucceeded(ada.user)) { $0.step = .authenticated(self.ada.user) }
        await store.receiveOutput(.signedIn(ada.user))
        await store.send(.logout) { $0.step = .unauthenticated }
        await store.finish()
    }

    @Test("2FA success: the right code completes the sign-in", arguments: AuthMachine.allCases)
    func twoFactorFlowSucceeds(_ machine: AuthMachine) async {
        switch machine {
        case .flow: await twoFactorFlowSucceeds(AuthFlow.self)
        case .chart: await twoFactorFlowSucceeds(AuthFlowChart.self)
        }
    }

    private func twoFactorFlowSucceeds<M: AuthFlowLike>(_: M.Type) async {
        let store = TestStore(M.self, io: ExampleHandlers.inMemory())
        let token = "2fa-\(grace.user.id)-1"
        await enterCredentials(store, email: grace.user.email, password: grace.password)
        await store.send(.login) { $0.step = .authenticating(email: self.grace.user.email) }
        await store.receive(.twoFactorRequired(token: token)) {
            $0.step = .requiresTwoFactor(token: token, email: self.grace.user.email)
        }
        await store.send(.updateTwoFactorCode("424242")) {
            $0.step = .enteringTwoFactor(token: token, email: self.grace.user.email, code: "424242")
        }
        await store.send(.submitTwoFactor) {
            $0.step = .verifyingTwoFactor(token: token, email: self.grace.user.email, code: "424242")
        }
        await store.receive(.twoFactorVerified(grace.user)) { $0.step = .authenticated(self.grace.user) }
        await store.receiveOutput(.signedIn(grace.user))
        await store.finish()
    }

    @Test("2FA failure: a wrong code counts as a failed attempt and asks for the code again", arguments: AuthMachine.allCases)
    func twoFactorFlowFails(_ machine: AuthMachine) async {
        switch machine {
        case .flow: await twoFactorFlowFails(AuthFlow.self)
        case .chart: await twoFactorFlowFails(AuthFlowChart.self)
        }
    }

    private func twoFactorFlowFails<M: AuthFlowLike>(_: M.Type) async {
        let store = TestStore(M.self, io: ExampleHandlers.inMemory())
        let token = "2fa-\(grace.user.id)-1"
        let email = grace.user.email
        await enterCredentials(store, email: email, password: grace.password)
        await store.send(.login) { $0.step = .authenticating(email: email) }
        await store.receive(.twoFactorRequired(token: token)) {
            $0.step = .requiresTwoFactor(token: token, email: email)
        }
        await store.send(.updateTwoFactorCode("000000")) {
            $0.step = .enteringTwoFactor(token: token, email: email, code: "000000")
        }
        await store.send(.submitTwoFactor) { $0.step = .verifyingTwoFactor(token: token, email: email, code: "000000") }
        await store.receive(.twoFactorFailed(.rejected(message: "wrong code"))) {
            $0.step = .requiresTwoFactor(token: token, email: email)
            $0.failedAttempts = 1
        }
        // The right code still works, and success clears the count.
        await store.send(.updateTwoFactorCode("424242")) {
            $0.step = .enteringTwoFactor(token: token, email: email, code: "424242")
        }
        await store.send(.submitTwoFactor) { $0.step = .verifyingTwoFactor(token: token, email: email, code: "424242") }
        await store.receive(.twoFactorVerified(grace.user)) {
            $0.step = .authenticated(self.grace.user)
            $0.failedAttempts = 0
        }
        await store.receiveOutput(.signedIn(grace.user))
        await store.finish()
    }

    @Test("lockout after maxAttempts wrong passwords: the run ends and later events are refused", arguments: AuthMachine.allCases)
    func lockoutAfterMaxAttempts(_ machine: AuthMachine) async {
        switch machine {
        case .flow: await lockoutAfterMaxAttempts(AuthFlow.self)
        case .chart: await lockoutAfterMaxAttempts(AuthFlowChart.self)
        }
    }

    private func lockoutAfterMaxAttempts<M: AuthFlowLike>(_: M.Type) async {
        let store = TestStore(M.self, io: ExampleHandlers.inMemory())
        let email = ada.user.email
        await enterCredentials(store, email: email, password: "guess")
        for attempt in 1...AuthFlow.defaultMaxAttempts {
            await store.send(.login) { $0.step = .authenticating(email: email) }
            if attempt < AuthFlow.defaultMaxAttempts {
                await store.receive(.authenticationFailed(.rejected(message: "wrong email or password"))) {
                    $0.step = .authenticationFailed(email: email, message: "wrong email or password", canRetry: true)
                    $0.failedAttempts = attempt
                }
                await store.send(.retry) { $0.step = .enteringCredentials(email: email, password: "") }
                await store.send(.updatePassword("guess \(attempt)")) {
                    $0.step = .enteringCredentials(email: email, password: "guess \(attempt)")
                }
            } else {
                await store.receive(.authenticationFailed(.rejected(message: "wrong email or password"))) {
                    $0.step = .locked
                    $0.failedAttempts = attempt
                }
            }
        }
        #expect(await store.host.hasEnded)
        #expect(throws: HostError.self) { try store.host.send(.startLogin) }
        await store.finish()
    }

    @Test("a service that cannot be reached does not count; retry then succeeds", arguments: AuthMachine.allCases)
    func unreachableServiceThenRetry(_ machine: AuthMachine) async throws {
        switch machine {
        case .flow: try await unreachableServiceThenRetry(AuthFlow.self)
        case .chart: try await unreachableServiceThenRetry(AuthFlowChart.self)
        }
    }

    private func unreachableServiceThenRetry<M: AuthFlowLike>(_: M.Type) async throws {
        let logins = PendingCalls<Authenticate>()
        var io = IOHandlers()
        io.register(Authenticate.self) { try await logins.handle($0) }
        let store = TestStore(M.self, io: io)
        let email = ada.user.email

        await enterCredentials(store, email: email, password: ada.password)
        await store.send(.login) { $0.step = .authenticating(email: email) }
        let first = try #require(await logins.next())
        #expect(first.request == Authenticate(email: email, password: ada.password))
        await first.fail(IOFailure(.handlerFailed, "connection refused"))
        await store.receive(.authenticationFailed(.unavailable(message: "connection refused", canRetry: true))) {
            $0.step = .authenticationFailed(email: email, message: "connection refused", canRetry: true)
        }
        await store.send(.retry) { $0.step = .enteringCredentials(email: email, password: "") }
        await store.send(.updatePassword(ada.password)) {
            $0.step = .enteringCredentials(email: email, password: self.ada.password)
        }
        await store.send(.login) { $0.step = .authenticating(email: email) }
        let second = try #require(await logins.next())
        await second.succeed(.authenticated(ada.user))
        await store.receive(.authenticationSucceeded(ada.user)) { $0.step = .authenticated(self.ada.user) }
        await store.receiveOutput(.signedIn(ada.user))
        await store.finish()
    }

    @Test("logout cancels the sign-in in flight; its late answer is never delivered", arguments: AuthMachine.allCases)
    func logoutCancelsInFlightAuth(_ machine: AuthMachine) async throws {
        switch machine {
        case .flow: try await logoutCancelsInFlightAuth(AuthFlow.self)
        case .chart: try await logoutCancelsInFlightAuth(AuthFlowChart.self)
        }
    }

    private func logoutCancelsInFlightAuth<M: AuthFlowLike>(_: M.Type) async throws {
        let logins = PendingCalls<Authenticate>()
        var io = IOHandlers()
        io.register(Authenticate.self) { try await logins.handle($0) }
        let store = TestStore(M.self, io: io)

        await enterCredentials(store, email: ada.user.email, password: ada.password)
        await store.send(.login) { $0.step = .authenticating(email: self.ada.user.email) }
        let call = try #require(await logins.next())
        await store.send(.logout) { $0.step = .unauthenticated }
        #expect(await call.cancellation(), "logout must cancel the sign-in in flight")
        #expect(await store.host.inFlightEffects.isEmpty)

        await call.succeed(.authenticated(ada.user))
        // A late delivery would have to be received before this send; the store fails if it was.
        await store.send(.startLogin) { $0.step = .enteringCredentials(email: "", password: "") }
        await store.finish()
    }

    @Test("logout during code verification cancels the verification", arguments: AuthMachine.allCases)
    func logoutCancelsVerification(_ machine: AuthMachine) async throws {
        switch machine {
        case .flow: try await logoutCancelsVerification(AuthFlow.self)
        case .chart: try await logoutCancelsVerification(AuthFlowChart.self)
        }
    }

    private func logoutCancelsVerification<M: AuthFlowLike>(_: M.Type) async throws {
        let verifications = PendingCalls<VerifyTwoFactor>()
        var io = IOHandlers()
        io.register(VerifyTwoFactor.self) { try await verifications.handle($0) }
        let verifying = State(step: .enteringTwoFactor(token: "t", email: "g@h.i", code: "424242"))
        let store = TestStore(M.self, initialState: verifying, io: io)

        await store.send(.submitTwoFactor) { $0.step = .verifyingTwoFactor(token: "t", email: "g@h.i", code: "424242") }
        let call = try #require(await verifications.next())
        #expect(call.request == VerifyTwoFactor(token: "t", code: "424242"))
        await store.send(.logout) { $0.step = .unauthenticated }
        #expect(await call.cancellation())
        await call.succeed(.verified(grace.user))
        await store.finish()
    }

    /// Applies `events` in order and returns the outputs each one's effect emits.
    private static func outputs(_ state: inout State, _ events: [AuthFlow.Event]) -> [[AuthFlow.Output]] {
        events.map { event in
            AuthFlow.update(&state, event: event).shape.flattened.compactMap { shape in
                if case .output(let output) = shape { output } else { nil }
            }
        }
    }

    private func enterCredentials<M: AuthFlowLike>(
        _ store: TestStore<M>, email: String, password: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async {
        await store.send(.startLogin, assert: { $0.step = .enteringCredentials(email: "", password: "") },
                         sourceLocation: sourceLocation)
        await store.send(.updateEmail(email), assert: { $0.step = .enteringCredentials(email: email, password: "") },
                         sourceLocation: sourceLocation)
        await store.send(.updatePassword(password),
                         assert: { $0.step = .enteringCredentials(email: email, password: password) },
                         sourceLocation: sourceLocation)
    }
}

/// The machines with AuthFlow's states, events and outputs: the flows run on each.
protocol AuthFlowLike: Machine
where State == AuthFlow.State, Event == AuthFlow.Event, Output == AuthFlow.Output, Env == Void {}

extension AuthFlow: AuthFlowLike {}
extension AuthFlowChart: AuthFlowLike {}

/// Which of the two an argument of a flow test runs.
enum AuthMachine: CaseIterable, Sendable { case flow, chart }
