import Foundation
import Grove
import GroveRuntime
import Testing

/// Seed 000's five patterns, run as `Oak<T>` on a `MachineHost`, checked against what the seed
/// says each one does.
@Suite("Seed 000: Common Patterns", .timeLimit(.minutes(2)))
struct Seed000Tests {
    private static let items = [DataItem(id: "1", title: "Oak"), DataItem(id: "2", title: "Birch")]
    /// Generous: a deadline matters only when a test fails, and the unit tests share two cores.
    private static let deadline = Duration.seconds(10)

    // MARK: Loading Data

    @Test("DataLoader: load fetches under \"loadData\"; a failure can be retried, dismissed or reloaded")
    func dataLoader() async throws {
        let fail = Locked(true)
        let env = DataLoader.Env(
            dataService: {
                if fail.value { throw TestError("offline") }
                return Self.items
            },
            connectivity: { true }
        )
        let host = MachineHost(Oak<DataLoader>.self, env: env)
        host.start()
        guard case .loading = try await host.sendAndWait(.load) else { Issue.record("load must start loading"); return }
        let failed = await host.firstState(within: Self.deadline) { if case .error = $0 { true } else { false } }
        guard case .error(let error, let canRetry)? = failed else { Issue.record("expected error, got \(String(describing: failed))"); return }
        #expect("\(error)" == "offline")
        #expect(canRetry, "the seed's isRetryable is always true")

        #expect("\(try await host.sendAndWait(.dismiss))" == "idle")
        fail.set(false)
        _ = try await host.sendAndWait(.load)
        let loaded = await host.firstState(within: Self.deadline) { if case .loaded = $0 { true } else { false } }
        guard case .loaded(let received)? = loaded else { Issue.record("expected loaded"); return }
        #expect(received == Self.items)

        guard case .loading = try await host.sendAndWait(.reload) else { Issue.record("reload must load again"); return }
        #expect(await host.firstState(within: Self.deadline) { if case .loaded = $0 { true } else { false } } != nil)

        // Pairs the seed does not list fall to `default: return nil`: ignored, state kept.
        guard case .loaded = try await host.sendAndWait(.retry) else { Issue.record("retry in loaded is ignored"); return }
        await host.stop()
    }

    // MARK: Form Validation

    @Test("UserForm: each update validates under \"validate\", a newer validation replaces the older")
    func userFormValidation() async throws {
        let slowCancelled = Locked(false)
        let env = UserForm.Env(
            submitForm: { _ in .success(confirmation: "F-1") },
            validateForm: { data in
                if data.name == "A" {
                    // The first validation is slow; the newer update must replace it.
                    try? await Task.sleep(for: .seconds(10))
                    if Task.isCancelled { slowCancelled.set(true) }
                    return [.nameRequired]
                }
                return data.isValid ? [] : [.invalidEmail]
            }
        )
        let host = MachineHost(Oak<UserForm>.self, env: env)
        host.start()
        _ = try await host.sendAndWait(.updateName("A"))
        _ = try await host.sendAndWait(.updateName("Ada"))
        let verdict = await host.firstState(within: Self.deadline) {
            if case .editing(_, let errors) = $0 { !errors.isEmpty } else { false }
        }
        guard case .editing(let data, let errors)? = verdict else { Issue.record("no verdict"); return }
        #expect(data.name == "Ada")
        #expect(errors == [.invalidEmail])
        #expect(try await eventually { slowCancelled.value }, "the older validation must be cancelled")

        _ = try await host.sendAndWait(.updateEmail("ada@example.com"))
        _ = try await host.sendAndWait(.updatePhone("0123456789"))
        let clean = await host.firstState(within: Self.deadline) {
            if case .editing(let data, let errors) = $0 { data.isValid && errors.isEmpty } else { false }
        }
        #expect(clean != nil)
        // The seed's submit waits for a clean verdict; a validationComplete for the phone update
        // may still be on its way, which changes nothing.
        guard case .submitting = try await host.sendAndWait(.submit) else { Issue.record("a valid form is submitted"); return }
        let termination = try await host.termination()
        guard case .submitted(result: .success(let confirmation)) = termination.finalState else {
            Issue.record("expected submitted, got \(termination.finalState)")
            return
        }
        #expect(confirmation == "F-1")
    }

    @Test("UserForm: cancel ends the form from any state; an invalid form is not submitted")
    func userFormCancel() async throws {
        var state = UserForm.initialState
        #expect(UserForm.update(&state, event: .submit) == nil)
        guard case .editing = state else { Issue.record("an invalid form stays in editing"); return }
        // `validate` and `validating` are declared but no transition uses them.
        #expect(UserForm.update(&state, event: .validate) == nil)
        guard case .editing = state else { Issue.record("validate is ignored"); return }
        #expect(UserForm.update(&state, event: .cancel) == nil)
        guard case .cancelled = state else { Issue.record("cancel ends the form"); return }
        #expect(state.isTerminal)
    }

    // MARK: Authentication Flow

    private static let ada = User(id: "u-ada", name: "Ada")

    private static func authEnv(_ result: @escaping @Sendable (String, String) throws -> AuthFlow.AuthResult) -> AuthFlow.Env {
        AuthFlow.Env(
            authenticate: { email, password in try result(email, password) },
            verifyTwoFactor: { _, code in
                guard code == "424242" else { throw TestError("wrong code") }
                return Self.ada
            },
            maxAttempts: 3
        )
    }

    @Test("AuthFlow: password, then a second factor; a wrong code asks again; authenticated ends the run")
    func authTwoFactor() async throws {
        let host = MachineHost(Oak<AuthFlow>.self, env: Self.authEnv { _, _ in .requiresTwoFactor(token: "t-1") })
        host.start()
        for event: AuthFlow.Event in [.startLogin, .updateEmail("ada@example.com"), .updatePassword("pw"), .login] {
            _ = try await host.sendAndWait(event)
        }
        let asked = await host.firstState(within: Self.deadline) { if case .requiresTwoFactor = $0 { true } else { false } }
        guard case .requiresTwoFactor(let token, let email)? = asked else { Issue.record("expected requiresTwoFactor"); return }
        #expect(token == "t-1")
        #expect(email == "ada@example.com")

        _ = try await host.sendAndWait(.updateTwoFactorCode("000000"))
        _ = try await host.sendAndWait(.submitTwoFactor)
        let again = await host.firstState(within: Self.deadline) { if case .requiresTwoFactor = $0 { true } else { false } }
        #expect(again != nil, "a wrong code returns to requiresTwoFactor")

        _ = try await host.sendAndWait(.updateTwoFactorCode("424242"))
        _ = try await host.sendAndWait(.submitTwoFactor)
        let termination = try await host.termination()
        guard case .authenticated(let user) = termination.finalState else { Issue.record("expected authenticated"); return }
        #expect(user == Self.ada)
        // The seed marks `authenticated` terminal yet lists `(.authenticated, .logout)`: a host
        // refuses events after a terminal state, so that transition can never run.
        #expect(throws: HostError.self) { try host.send(.logout) }
    }

    @Test("AuthFlow: a locked account ends in locked; another failure can be retried")
    func authFailures() async throws {
        let locked = MachineHost(Oak<AuthFlow>.self, env: Self.authEnv { _, _ in throw AccountLockedError() })
        locked.start()
        for event: AuthFlow.Event in [.startLogin, .login] { _ = try await locked.sendAndWait(event) }
        guard case .locked = try await locked.termination().finalState else { Issue.record("expected locked"); return }

        let wrong = MachineHost(Oak<AuthFlow>.self, env: Self.authEnv { _, _ in throw TestError("wrong password") })
        wrong.start()
        for event: AuthFlow.Event in [.startLogin, .login] { _ = try await wrong.sendAndWait(event) }
        let failed = await wrong.firstState(within: Self.deadline) { if case .authenticationFailed = $0 { true } else { false } }
        guard case .authenticationFailed(_, let canRetry)? = failed else { Issue.record("expected authenticationFailed"); return }
        #expect(canRetry)
        guard case .enteringCredentials(email: "", password: "") = try await wrong.sendAndWait(.retry) else {
            Issue.record("retry starts over")
            return
        }
        await wrong.stop()
    }

    // MARK: Navigation Coordinator

    @Test("AppNavigator: push, pop (never below the root), modal, navigate and reset")
    func navigator() async throws {
        let host = MachineHost(Oak<AppNavigator>.self)
        host.start()
        let item = Item(id: "7")
        func expect(_ stack: [AppNavigator.Route], _ modal: AppNavigator.Route?, after event: AppNavigator.Event) async throws {
            let state = try await host.sendAndWait(event)
            guard case .navigating(let actualStack, let actualModal) = state else { return }
            #expect(actualStack == stack, "\(event)")
            #expect(actualModal == modal, "\(event)")
        }
        try await expect([.home, .detail(item)], nil, after: .push(.detail(item)))
        try await expect([.home, .detail(item)], .login, after: .presentModal(.login))
        try await expect([.home, .detail(item)], nil, after: .dismissModal)
        try await expect([.home], nil, after: .pop)
        try await expect([.home], nil, after: .pop)
        try await expect([.settings], nil, after: .navigate(.settings))
        try await expect([.home], nil, after: .reset)
        await host.stop()
    }

    // MARK: Timer and Polling

    @Test("PollingService: startPolling ticks and fetches; pausePolling, resumePolling, stopPolling")
    func polling() async throws {
        let fetches = Locked(0)
        let env = PollingService.Env(fetchData: {
            fetches.update { $0 += 1 }
            return Data("fresh".utf8)
        })
        let host = MachineHost(Oak<PollingService>.self, env: env)
        host.start()
        guard case .polling(let interval, nil) = try await host.sendAndWait(.startPolling(interval: 0.1)) else {
            Issue.record("startPolling polls")
            return
        }
        #expect(interval == 0.1)
        let updated = await host.firstState(within: Self.deadline) { if case .polling(_, .some) = $0 { true } else { false } }
        #expect(updated != nil, "a tick fetches and dataUpdated records the time")
        #expect(try await eventually { fetches.value >= 2 }, "ticks repeat")

        guard case .paused(0.1, .some) = try await host.sendAndWait(.pausePolling) else { Issue.record("pausePolling pauses"); return }
        #expect(try await eventually { await host.inFlightEffects.isEmpty }, "pausePolling cancels the \"polling\" effect")
        guard case .polling = try await host.sendAndWait(.resumePolling) else { Issue.record("resumePolling polls"); return }
        #expect(await host.inFlightEffects.contains("polling"))
        guard case .idle = try await host.sendAndWait(.stopPolling) else { Issue.record("stopPolling stops"); return }
        #expect(try await eventually { await !host.inFlightEffects.contains("polling") })
        await host.stop()
    }
}

/// Waits up to ten seconds for `condition` (a deadline matters only when a test fails), checking every 10 ms.
func eventually(_ condition: @Sendable () async -> Bool) async throws -> Bool {
    let clock = ContinuousClock()
    let deadline = clock.now + .seconds(10)
    while clock.now < deadline {
        if await condition() { return true }
        try await Task.sleep(for: .milliseconds(10))
    }
    return await condition()
}
