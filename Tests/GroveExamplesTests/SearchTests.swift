import Grove
import GroveExamples
import GroveRuntime
import Testing

@Suite("Search (SwiftTea dialect)", .timeLimit(.minutes(2)))
struct SearchTests {
    /// One search the test answers by hand.
    struct SearchCall: IORequest {
        typealias Response = [SearchResult]
        var query: String
    }

    private let catalog = [
        SearchResult(id: "1", title: "Oak"),
        SearchResult(id: "2", title: "Birch"),
        SearchResult(id: "3", title: "Cork oak"),
    ]

    private func host(_ calls: PendingCalls<SearchCall>, log: ExampleLog<Search.Action> = ExampleLog())
        -> MachineHost<Tea<Search>> {
        let host = MachineHost(Tea<Search>.self, env: Search.Environment { query in
            try await calls.handle(SearchCall(query: query))
        }, options: recordingOptions(log))
        host.start()
        return host
    }

    // MARK: Pure reducer

    @Test("search starts a cancellable effect under the id \"search\"")
    func searchIsCancellable() {
        let (state, effect) = Search.reduce(Search.State(), .search("oak"))
        #expect(state == Search.State(query: "oak", isSearching: true))
        guard case .cancellable(let work, let id) = effect else {
            Issue.record("expected a cancellable effect, got \(effect)")
            return
        }
        #expect(id == Search.searchID)
        #expect(work.catchesErrors)
    }

    @Test("cancelSearch cancels \"search\" while searching and is unhandled otherwise")
    func cancelSearch() {
        let (state, effect) = Search.reduce(Search.State(query: "o", isSearching: true), .cancelSearch)
        #expect(!state.isSearching)
        guard case .cancel(let id) = effect else {
            Issue.record("expected a cancel effect, got \(effect)")
            return
        }
        #expect(id == "search")
        guard case .unhandled = Search.reduce(Search.State(), .cancelSearch).1 else {
            Issue.record("cancelSearch while idle should be unhandled")
            return
        }
    }

    // MARK: Running in a host

    @Test("a search through the in-memory service finds matching titles")
    func searchFinds() async throws {
        let host = MachineHost(Tea<Search>.self, env: .inMemory(catalog))
        host.start()
        try host.send(.search("oak"))
        let state = try #require(await awaitState(of: host) { !$0.isSearching && !$0.results.isEmpty })
        #expect(state.results.map(\.title) == ["Oak", "Cork oak"])
        #expect(state.errorMessage == nil)
        await host.stop()
    }

    @Test("a new query replaces the search in flight: only the newest results are delivered")
    func replaceOnSameID() async throws {
        let calls = PendingCalls<SearchCall>()
        let log = ExampleLog<Search.Action>()
        let host = host(calls, log: log)

        _ = try await host.sendAndWait(.search("o"))
        let stale = try #require(await calls.next())
        _ = try await host.sendAndWait(.search("oa"))
        let newest = try #require(await calls.next())
        #expect(await stale.cancellation(), "the replaced search was not cancelled")

        await newest.succeed([catalog[0]])
        let state = try #require(await awaitState(of: host) { !$0.isSearching })
        #expect(state.query == "oa")
        #expect(state.results == [catalog[0]])

        // The replaced search ignores cancellation and finishes anyway; its results must never
        // reach the machine. One more round trip gives a late delivery time to show up.
        await stale.succeed(catalog)
        _ = try await host.sendAndWait(.search("cork"))
        let last = try #require(await calls.next())
        await last.succeed([catalog[2]])
        #expect(await awaitState(of: host) { $0.results == [self.catalog[2]] } != nil)
        #expect(!log.values.contains(.searchResults(catalog)))
        #expect(await host.inFlightEffects.isEmpty)
        await host.stop()
    }

    @Test("cancelSearch cancels the search in flight and stops searching")
    func cancelInFlight() async throws {
        let calls = PendingCalls<SearchCall>()
        let log = ExampleLog<Search.Action>()
        let host = host(calls, log: log)

        _ = try await host.sendAndWait(.search("birch"))
        let call = try #require(await calls.next())
        #expect(await host.inFlightEffects == [Search.searchID])
        let state = try await host.sendAndWait(.cancelSearch)
        #expect(!state.isSearching)
        #expect(await call.cancellation())
        #expect(await host.inFlightEffects.isEmpty)

        await call.succeed([catalog[1]])
        _ = try await host.sendAndWait(.search("oak"))
        try await #require(await calls.next()).succeed([catalog[0]])
        #expect(await awaitState(of: host) { $0.results == [self.catalog[0]] } != nil)
        #expect(!log.values.contains(.searchResults([catalog[1]])))
        await host.stop()
    }

    @Test("a failed search is reported through catch:, and the machine keeps running")
    func failedSearch() async throws {
        let calls = PendingCalls<SearchCall>()
        let host = host(calls)
        _ = try await host.sendAndWait(.search("oak"))
        try await #require(await calls.next()).fail(IOFailure(.handlerFailed, "search service unreachable"))
        let state = try #require(await awaitState(of: host) { !$0.isSearching })
        #expect(state.errorMessage == "handler-failed: search service unreachable")
        #expect(state.results.isEmpty)
        #expect(await !host.hasEnded)
        await host.stop()
    }
}
