import Grove
import GroveRuntime
import GroveExamples
import Synchronization

/// One demonstration: a machine driven through a representative flow.
struct Scene: Sendable {
    var name: String
    var summary: String
    var run: @Sendable () async throws -> Void

    static let all: [Scene] = [loader, auth, polling, navigator, login, search, loading, retrying]

    static let loader = Scene(name: "loader", summary: "DataLoader: load, reload replacing the fetch in flight") {
        var handlers = ExampleHandlers.inMemory()
        handlers.register(FetchItems.self) { _ in
            try await Task.sleep(for: .milliseconds(100))   // a slow service, so a reload can overtake it
            return ExampleHandlers.demoItems
        }
        let host = MachineHost(DataLoader.self, io: handlers, options: TransitionPrinter.options("loader"))
        host.start()
        _ = try await host.sendAndWait(.load)
        try await awaitState(host, "loaded") { if case .loaded = $0 { true } else { false } }
        _ = try await host.sendAndWait(.reload)
        _ = try await host.sendAndWait(.reload)   // replaces the first reload's fetch: one result arrives
        print("           (two reloads, one fetch in flight: \(await host.inFlightEffects.map(\.description)))")
        try await awaitState(host, "loaded again") { if case .loaded = $0 { true } else { false } }
        await host.stop()
    }

    static let auth = Scene(name: "auth", summary: "AuthFlow: two-factor sign-in, logout, lockout after 3 wrong passwords") {
        let host = MachineHost(AuthFlow.self, io: ExampleHandlers.inMemory(),
                               options: TransitionPrinter.options("auth"))
        host.start()
        for event: AuthFlow.Event in [.startLogin, .updateEmail("grace@example.com"), .updatePassword("compiler"), .login] {
            _ = try await host.sendAndWait(event)
        }
        try await awaitState(host, "the two-factor prompt") { if case .requiresTwoFactor = $0.step { true } else { false } }
        _ = try await host.sendAndWait(.updateTwoFactorCode("424242"))
        _ = try await host.sendAndWait(.submitTwoFactor)
        try await awaitState(host, "authenticated") { if case .authenticated = $0.step { true } else { false } }
        _ = try await host.sendAndWait(.logout)
        for attempt in 1...3 {
            for event: AuthFlow.Event in [attempt == 1 ? .startLogin : .retry, .updateEmail("ada@example.com"),
                                          .updatePassword("wrong-\(attempt)"), .login] {
                _ = try await host.sendAndWait(event)
            }
            try await awaitState(host, "a failed attempt \(attempt)") { $0.failedAttempts == attempt }
        }
        let termination = try await host.termination()
        print("auth run ended in \(termination.finalState.step)")
        do {
            try host.send(.startLogin)
        } catch {
            print("a send after the lockout fails: \(error)")
        }
    }

    static let polling = Scene(name: "polling", summary: "PollingService: timer-driven fetches every 0.2 s, pause, resume, stop") {
        let host = MachineHost(PollingService.self, io: ExampleHandlers.inMemory(),
                               options: TransitionPrinter.options("poller"))
        host.start()
        _ = try await host.sendAndWait(.startPolling(interval: 0.2))
        try await Task.sleep(for: .milliseconds(650))   // real time: about three ticks
        _ = try await host.sendAndWait(.pausePolling)
        try await Task.sleep(for: .milliseconds(400))   // paused: no ticks, no fetches
        _ = try await host.sendAndWait(.resumePolling)
        try await Task.sleep(for: .milliseconds(250))
        _ = try await host.sendAndWait(.stopPolling)
        await host.stop()
    }

    static let navigator = Scene(name: "navigator", summary: "AppNavigator: stack and modal") {
        let host = MachineHost(AppNavigator.self, options: TransitionPrinter.options("nav"))
        host.start()
        let item = DataItem(id: "2", title: "Birch")
        for event: AppNavigator.Event in [.push(.detail(item)), .presentModal(.settings), .dismissModal, .pop, .pop] {
            _ = try await host.sendAndWait(event)
        }
        await host.stop()
    }

    static let login = Scene(name: "login", summary: "LoginFlow: the pure transducer to its terminal state") {
        let host = MachineHost(OakTransducer<LoginFlow>.self, options: TransitionPrinter.options("login"))
        let user = User(id: "u-ada", name: "Ada Lovelace", email: "ada@example.com")
        for event: LoginFlow.Event in [.startLogin, .updateEmail(user.email), .updatePassword("analytical"),
                                       .submitCredentials, .authenticationSucceeded(user), .loginComplete] {
            try host.send(event)
        }
        let termination = try await host.run()
        print("login run ended: \(termination.reason), final state \(termination.finalState)")
    }

    static let search = Scene(name: "search", summary: "Search (SwiftTea style): a newer search replaces the one in flight") {
        let catalog = [SearchResult(id: "1", title: "Oak"), SearchResult(id: "2", title: "Oakmoss"),
                       SearchResult(id: "3", title: "Rowan")]
        let env = Search.Environment { query in
            try await Task.sleep(for: .milliseconds(query.count < 3 ? 300 : 50))   // the older query is slower
            return try await Search.Environment.inMemory(catalog).search(query)
        }
        let host = MachineHost(Tea<Search>.self, env: env, options: TransitionPrinter.options("search"))
        host.start()
        _ = try await host.sendAndWait(.search("oa"))
        _ = try await host.sendAndWait(.search("oak"))
        try await awaitState(host, "results for 'oak'") { !$0.isSearching }
        try await Task.sleep(for: .milliseconds(400))   // the replaced 'oa' search would have answered by now
        print("results: \(await host.state.results.map(\.title)) for query '\(await host.state.query)'")
        await host.stop()
    }

    static let loading = Scene(name: "loading", summary: "Loading (StateMachinePackage style): states as an async sequence") {
        let attempts = Counter()
        let machine = LoadingStateMachine.asyncStateMachine(load: .init { id in
            if attempts.next() == 1 { throw DemoError("the first load of \(id) fails") }
            return 42
        })
        var iterator = machine.makeAsyncIterator()
        print("loading  state: \(await iterator.next().map { "\($0)" } ?? "-")")
        try machine.send(.loadingWasRequested(id: "answer"))
        print("loading  state: \(await iterator.next().map { "\($0)" } ?? "-")")
        print("loading  state: \(await iterator.next().map { "\($0)" } ?? "-")")
        try machine.send(.loadingWasRequested(id: "answer"))
        print("loading  state: \(await iterator.next().map { "\($0)" } ?? "-")")
        print("loading  state: \(await iterator.next().map { "\($0)" } ?? "-")")
        await machine.stop()
    }

    static let retrying = Scene(name: "retrying", summary: "RetryingFeature (TCA-SM style): two failures, then success") {
        let attempts = Counter()
        let feature = RetryingFeature {
            let attempt = attempts.next()
            if attempt <= 2 { throw DemoError("attempt \(attempt) timed out") }
            return "document after \(attempt) attempts"
        }
        let host = MachineHost(IOMachine<RetryingFeature>.self, env: feature, options: TransitionPrinter.options("retry"))
        host.start()
        _ = try await host.sendAndWait(.input(.start))
        try await awaitState(host, "loaded") { if case .loaded = $0 { true } else { false } }
        await host.stop()
    }
}

/// Counts calls from any task.
final class Counter: Sendable {
    private let value = Mutex(0)
    func next() -> Int { value.withLock { $0 += 1; return $0 } }
}
