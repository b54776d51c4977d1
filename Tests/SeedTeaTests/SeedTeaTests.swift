import Foundation
import Grove
import GroveTea
import GroveRuntime
import Testing

/// Seed 002's top-level examples, run on a `Store` as the document describes them.
@Suite("Seed 002: SwiftTea Advanced Patterns", .timeLimit(.minutes(2)))
struct SeedTeaTests {
    // MARK: Cancellation

    @Test("Testing Cancellation: the seed's testSearchCancellation() passes")
    func seedCancellationTest() {
        testSearchCancellation()
    }

    @Test("Testing Effects: the seed's helpers read searchReducer's effects")
    func effectHelpers() {
        let (_, search) = searchReducer(state: SearchState(), action: .search("oak"))
        let (_, cancel) = searchReducer(state: SearchState(isSearching: true), action: .cancelSearch)
        let (_, none) = searchReducer(state: SearchState(isSearching: true), action: .searchResults([]))
        #expect(!search.isNone && !search.isTask && search.cancelID == nil)   // cancellable, not task
        #expect(cancel.cancelID == "search")
        #expect(none.isNone)
        #expect(Effect<SearchAction>.task { .cancelSearch }.isTask)
    }

    @Test("Cancellable Operations: cancelSearch cancels the search in flight; its results never arrive")
    func cancelSearch() async throws {
        let held = SearchService.hold("cork")
        let store = Store(initialState: SearchState(), reduce: searchReducer)
        let history = await history(of: store)
        try await store.sendAndWait(.search("cork"))
        #expect(await store.inFlightEffects.contains("search"))
        let state = try await store.sendAndWait(.cancelSearch)
        #expect(!state.isSearching)
        #expect(await !store.inFlightEffects.contains("search"))
        held.open()
        try store.send(.search("rowan"))
        let done = await store.firstState(within: .seconds(10)) { !$0.results.isEmpty }
        #expect(done?.results == [SearchResult(title: "Rowan")])
        await store.stop()
        #expect(!(await history.value).contains { $0.results.contains(SearchResult(title: "Cork oak")) })
    }

    @Test("Automatic Cancellation with Replacement: only the newest query's results arrive")
    func replacement() async throws {
        let held = SearchService.hold("o")
        let store = Store(initialState: SearchState(), reduce: replacingSearchReducer)
        let history = await history(of: store)
        try await store.sendAndWait(.search("o"))
        try await store.sendAndWait(.search("row"))
        held.open()
        let done = await store.firstState(within: .seconds(10)) { !$0.isSearching }
        #expect(done?.query == "row")
        #expect(done?.results == [SearchResult(title: "Rowan")])
        await store.stop()
        #expect(!(await history.value).contains { $0.results.count == 3 }, "the replaced search for \"o\" delivered")
    }

    @Test("Cancellation with Effect Sequences: cancel, then search again under the same id")
    func sequencedCancel() async throws {
        let held = SearchService.hold("r")
        let store = Store(initialState: SequencedSearchState(), reduce: sequencedSearchReducer)
        try await store.sendAndWait(.startNewSearch("r"))
        try await store.sendAndWait(.startNewSearch("cork"))
        held.open()
        let done = await store.firstState(within: .seconds(10)) { !$0.results.isEmpty }
        #expect(done?.searchQuery == "cork")
        #expect(done?.results == [SearchResult(title: "Cork oak")])
        await store.stop()
    }

    @Test("store.cancel(id) cancels from outside, as the reducer's .cancel(id) would")
    func storeCancel() async throws {
        let held = SearchService.hold("oak!")
        let store = Store(initialState: SearchState(), reduce: searchReducer)
        try await store.sendAndWait(.search("oak!"))
        #expect(await store.inFlightEffects.contains("search"))
        await store.cancel("search")
        #expect(await store.inFlightEffects.isEmpty)
        held.open()
        #expect(await store.state.isSearching, "no results may arrive after cancel")
        await store.stop()
    }

    @Test("Conditional Cancellation: logging out cancels the three background operations")
    func conditionalCancellation() async throws {
        let store = Store(initialState: SessionState(), reduce: sessionReducer)
        try await store.sendAndWait(.userLoggedIn)
        let background: Set<EffectID> = ["user-data-sync", "notification-stream", "analytics-upload"]
        #expect(background.isSubset(of: await store.inFlightEffects))
        let state = try await store.sendAndWait(.userLoggedOut)
        #expect(!state.isAuthenticated)
        let cleared = await withinDeadline {
            while !(await store.inFlightEffects).isDisjoint(with: background) { await Task.yield() }
            return true
        }
        let left = await store.inFlightEffects
        #expect(cleared == true, "still in flight: \(left)")
        #expect(await store.state.syncs == 0)
        await store.stop()
    }

    // MARK: Streams and composition

    @Test("Streaming Data: fixes arrive from the stream; stopping cancels it and stops the manager")
    func streaming() async throws {
        let store = Store(initialState: LocationState(), reduce: locationReducer)
        try store.send(.startLocationUpdates)
        let last = await store.firstState(within: .seconds(10)) { $0.currentLocation == LocationHardware.fixes.last }
        #expect(last != nil)
        #expect(LocationHardware.starts.value == 1)
        try store.send(.stopLocationUpdates)
        let stopped = await withinDeadline { try await LocationHardware.stopped.wait(); return true }
        #expect(stopped == true, "onTermination never stopped the location manager")
        await store.stop()
    }

    @Test("Effect Composition: the three launch tasks all report, one after another")
    func effectComposition() async throws {
        let store = Store(initialState: [], reduce: launchReducer)
        try store.send(.initializeApp)
        let launched = await store.firstState(within: .seconds(10)) { $0.count == 3 }
        #expect(launched == [.loadUserPreferences, .checkForUpdates, .initializeAnalytics])
        await store.stop()
    }

    @Test("Action Composition: child effects mapped into the app's actions reach the child again")
    func actionComposition() async throws {
        let store = Store(initialState: AppState(), reduce: appReducer)
        try store.send(.posts(.add(Post(id: 7, title: "Acorns"))))
        try store.send(.settings(.toggleDarkMode))
        try store.send(.user(.userLoaded(User(id: "u-ada", name: "Ada"))))
        let state = await store.firstState(within: .seconds(10)) { $0.posts.published == [7] && $0.user.isLoggedIn }
        #expect(state?.settings.darkMode == true)
        #expect(state?.user.currentUser?.name == "Ada")
        await store.stop()
    }

    // MARK: Errors

    @Test("Result-Based Actions: success and failure both arrive as actions")
    func resultBased() async throws {
        let store = Store(initialState: NetworkState(), reduce: networkReducer)
        NetworkService.next.set(.success(Data("acorn".utf8)))
        try store.send(.fetchData)
        let loaded = await store.firstState(within: .seconds(10)) { !$0.isLoading && $0.data != nil }
        #expect(loaded.flatMap(\.data).map { String(decoding: $0, as: UTF8.self) } == "acorn")
        NetworkService.next.set(.failure(TestError("offline")))
        let loading = try await store.sendAndWait(.fetchData)
        #expect(loading.isLoading && loading.error == nil)
        let failed = await store.firstState(within: .seconds(10)) { !$0.isLoading && $0.error != nil }
        #expect(failed?.error as? TestError == TestError("offline"))
        #expect(await !store.hasEnded)
        await store.stop()
    }

    @Test("Retry Logic: retryable succeeds on the third attempt; out of retries, the error is logged and the store goes on")
    func retryable() async throws {
        let attempts = Locked(0)
        let flaky = RetryableRequest<Int>(operation: {
            attempts.update { $0 += 1 }
            guard attempts.value >= 3 else { throw TestError("attempt \(attempts.value) failed") }
            return attempts.value
        }, maxRetries: 2, delay: 0)
        let store = Store(initialState: 0) { (_: Int, action: Int) -> (Int, Effect<Int>) in
            action == 0 ? (0, .retryable(flaky, transform: { $0 })) : (action, .none)
        }
        try store.send(0)
        #expect(await store.firstState(within: .seconds(10)) { $0 == 3 } == 3)
        await store.stop()

        let hopeless = RetryableRequest<Int>(operation: { throw TestError("down") }, maxRetries: 1, delay: 0)
        let failing = Store(initialState: 0) { (_: Int, _: Int) -> (Int, Effect<Int>) in
            (0, .retryable(hopeless, transform: { $0 }))
        }
        _ = try await failing.sendAndWait(0)
        // Errors are events, not stops (docs/DIALECTS.md): the last error is logged, the work
        // ends, and the store goes on.
        let settled = await withinDeadline {
            while !(await failing.inFlightEffects.isEmpty) { try await Task.sleep(for: .milliseconds(5)) }
            return true
        }
        #expect(settled == true, "the retryable effect should end with its last error")
        #expect(await !failing.hasEnded, "an uncaught error is logged; the store keeps running")
        #expect(try await failing.sendAndWait(7) == 0, "the store still reduces (this reducer always answers 0)")
        await failing.stop()
    }

    // MARK: Performance

    @Test("Selective Subscriptions: visiblePosts follows postIDs in the normalized state")
    func visiblePosts() {
        let oak = Post(id: 1, title: "Oak"), ash = Post(id: 2, title: "Ash")
        let state = NormalizedExample.AppState(posts: [1: oak, 2: ash], users: [:], postIDs: [2, 3, 1])
        #expect(state.visiblePosts == [ash, oak])
        #expect(NestedExample.AppState(posts: [oak]).posts.count == 1)
    }

    @Test("Effect Debouncing: only the last of two quick calls runs")
    func debouncer() async throws {
        let ran = Locked<[Int]>([])
        let done = Gate()
        let debouncer = Debouncer()
        await debouncer.debounce(for: 60) { ran.update { $0.append(1) } }
        await debouncer.debounce(for: 0) {
            ran.update { $0.append(2) }
            done.open()
        }
        #expect(await withinDeadline { try await done.wait(); return true } == true)
        #expect(ran.value == [2])
    }

    /// Every state `store` commits from now on, recorded until the store stops.
    private func history<S: Sendable, A: Sendable>(of store: Store<S, A>) async -> Task<[S], Never> {
        let states = await store.states()
        return Task {
            var seen: [S] = []
            for await state in states { seen.append(state) }
            return seen
        }
    }
}
