import Grove
import GroveExamples
import GroveRuntime
import Testing

@Suite("AppFeature environment pattern (SwiftTea dialect)", .timeLimit(.minutes(2)))
struct AppEnvironmentFeatureTests {
    /// A preferences load the test answers by hand.
    struct PreferencesCall: IORequest {
        typealias Response = Preferences
    }

    private let ada = ExampleHandlers.demoAccounts[0]
    private let dark = Preferences(theme: "dark", notifications: false)

    // MARK: Pure reducer

    @Test("user actions go to UserFeature and its effects come back lifted into the app")
    func composition() {
        let (state, effect) = AppFeature.reduce(AppFeature.State(), .user(.login(email: "a", password: "b")))
        #expect(state.user.isLoggingIn)
        guard case .cancellable(_, let id) = effect else {
            Issue.record("expected the user feature's cancellable login, got \(effect)")
            return
        }
        #expect(id == UserFeature.loginID)
        guard case .cancel(UserFeature.loginID) = AppFeature.reduce(state, .user(.logout)).1 else {
            Issue.record("logout should cancel the login in flight")
            return
        }
    }

    @Test("a feature's unhandled action is unhandled for the app, with the state kept")
    func unhandledPropagates() {
        let start = AppFeature.State(preferences: dark)
        let (state, effect) = AppFeature.reduce(start, .user(.userLoaded(ada.user)))
        guard case .unhandled = effect else {
            Issue.record("expected unhandled, got \(effect)")
            return
        }
        #expect(state == start)
    }

    // MARK: Running in a host

    @Test("the same program signs in with the live services and is refused by an empty mock")
    func liveVersusMock() async throws {
        let live = MachineHost(Tea<AppFeature>.self, env: .live)
        live.start()
        try live.send(.user(.login(email: ada.user.email, password: ada.password)))
        let signedIn = try #require(await awaitState(of: live) { !$0.user.isLoggingIn && $0.user.currentUser != nil })
        #expect(signedIn.user.currentUser == ada.user)
        await live.stop()

        let mock = MachineHost(Tea<AppFeature>.self, env: .mock())
        mock.start()
        try mock.send(.user(.login(email: ada.user.email, password: ada.password)))
        let refused = try #require(await awaitState(of: mock) { $0.user.errorMessage != nil })
        #expect(refused.user.errorMessage == "wrong email or password")
        #expect(refused.user.currentUser == nil)
        await mock.stop()
    }

    @Test("a successful sign-in is also tracked, through the merged analytics task")
    func loginTracked() async throws {
        let tracked = ExampleLog<String>()
        let loginTracked = ExampleSignal()
        let host = MachineHost(Tea<AppFeature>.self, env: .mock(accounts: [ada]) { name in
            tracked.append(name)
            if name == "login" { loginTracked.fire() }
        })
        host.start()
        try host.send(.user(.login(email: ada.user.email, password: ada.password)))
        #expect(await loginTracked.wait())
        #expect(tracked.values == ["login"])
        #expect(await host.state.user.currentUser == ada.user)
        await host.stop()
    }

    @Test("initializeApp is truly sequential: the launch is tracked only after preferences arrived")
    func sequenceIsSequential() async throws {
        let loads = PendingCalls<PreferencesCall>()
        let order = ExampleLog<String>()
        let launched = ExampleSignal()
        var env = AppEnvironment.mock { name in
            order.append("track \(name)")
            launched.fire()
        }
        env.dataStore = AppEnvironment.DataStore { try await loads.handle(PreferencesCall()) }
        let host = MachineHost(Tea<AppFeature>.self, env: env, options: HostOptions(trace: { trace in
            if case .processed(.preferencesLoaded, _, _) = trace { order.append("preferences loaded") }
        }))
        host.start()

        _ = try await host.sendAndWait(.initializeApp)
        let load = try #require(await loads.next())
        #expect(!launched.isFired, "the second step started before the first finished")
        await load.succeed(dark)
        #expect(await launched.wait())
        #expect(order.values == ["preferences loaded", "track app_launched"])
        #expect(await host.state.preferences == dark)
        await host.stop()
    }

    @Test("a failing store becomes an error message, and the launch is still tracked")
    func preferencesFail() async throws {
        let launched = ExampleSignal()
        let host = MachineHost(Tea<AppFeature>.self, env: .mock(preferences: nil) { _ in launched.fire() })
        host.start()
        try host.send(.initializeApp)
        #expect(await launched.wait())
        let state = await host.state
        #expect(state.errorMessage == "no saved preferences")
        #expect(state.preferences == nil)
        await host.stop()
    }
}
