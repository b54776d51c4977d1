import Foundation
import Grove
import GroveExamples
import GroveRuntime
import GroveTesting
import Testing

@Suite("DataLoader", .timeLimit(.minutes(2)))
struct DataLoaderTests {
    private let items = [DataItem(id: "1", title: "Oak"), DataItem(id: "2", title: "Birch")]
    private let fresh = [DataItem(id: "3", title: "Rowan")]

    // MARK: Pure transitions

    @Test("load from idle starts the fetch under the loader's id")
    func loadStartsFetch() {
        var state = DataLoader.State.idle
        let effect = DataLoader.update(&state, event: .load)
        #expect(state == .loading)
        #expect(effect.shape.flattened == [.io(id: DataLoader.fetchID, FetchItems(forceRefresh: false))])
    }

    @Test("reload from loaded, and while loading, fetches fresh data under the same id")
    func reloadReplacesFetch() {
        for start in [DataLoader.State.loaded(items), .loading] {
            var state = start
            let effect = DataLoader.update(&state, event: .reload)
            #expect(state == .loading)
            #expect(effect.shape.flattened == [.io(id: DataLoader.fetchID, FetchItems(forceRefresh: true))])
        }
    }

    @Test("results move loading to loaded or error")
    func resultsSettleLoading() {
        var state = DataLoader.State.loading
        #expect(DataLoader.update(&state, event: .dataReceived(items)).isNone)
        #expect(state == .loaded(items))

        state = .loading
        #expect(DataLoader.update(&state, event: .loadFailed(message: "offline", canRetry: true)).isNone)
        #expect(state == .error(message: "offline", canRetry: true))
    }

    @Test("retry refetches only after a retryable error; dismiss returns to idle")
    func retryAndDismiss() {
        var state = DataLoader.State.error(message: "offline", canRetry: true)
        let effect = DataLoader.update(&state, event: .retry)
        #expect(state == .loading)
        #expect(effect.shape.flattened == [.io(id: DataLoader.fetchID, FetchItems(forceRefresh: false))])

        state = .error(message: "gone", canRetry: false)
        #expect(DataLoader.update(&state, event: .retry).isUnhandled)
        #expect(state == .error(message: "gone", canRetry: false))
        #expect(DataLoader.update(&state, event: .dismiss).isNone)
        #expect(state == .idle)
    }

    @Test("events that make no sense where the loader is are unhandled and change nothing",
          arguments: [
              (DataLoader.State.idle, DataLoader.Event.reload),
              (.idle, .dataReceived([])),
              (.loading, .load),
              (.loading, .dismiss),
              (.loaded([]), .retry),
              (.error(message: "x", canRetry: true), .load),
          ])
    func unhandledPairs(state start: DataLoader.State, event: DataLoader.Event) {
        var state = start
        #expect(DataLoader.update(&state, event: event).isUnhandled)
        #expect(state == start)
    }

    @Test("states and events survive a JSON round trip, as they must to cross processes")
    func codableRoundTrip() throws {
        let states: [DataLoader.State] = [.idle, .loading, .loaded(items), .error(message: "m", canRetry: false)]
        let events: [DataLoader.Event] = [
            .load, .reload, .dataReceived(items), .loadFailed(message: "m", canRetry: true), .retry, .dismiss,
        ]
        #expect(try roundTrip(states) == states)
        #expect(try roundTrip(events) == events)
        #expect(try roundTrip(FetchItems(forceRefresh: true)) == FetchItems(forceRefresh: true))
    }

    // MARK: Flows through the test store

    @Test("load delivers the items of the in-memory service")
    func loadFlow() async {
        let store = TestStore(DataLoader.self, io: ExampleHandlers.inMemory(items: items))
        await store.send(.load) { $0 = .loading }
        await store.receive(.dataReceived(items)) { $0 = .loaded(items) }
        await store.finish()
    }

    @Test("a failed fetch can be retried, and the retry succeeds")
    func retryAfterFailure() async throws {
        let fetches = PendingCalls<FetchItems>()
        let store = TestStore(DataLoader.self, io: handlers(fetches))

        await store.send(.load) { $0 = .loading }
        let first = try #require(await fetches.next())
        await first.fail(IOFailure(.handlerFailed, "connection reset"))
        await store.receive(.loadFailed(message: "connection reset", canRetry: true)) {
            $0 = .error(message: "connection reset", canRetry: true)
        }

        await store.send(.retry) { $0 = .loading }
        let second = try #require(await fetches.next())
        #expect(second.request == FetchItems(forceRefresh: false))
        await second.succeed(items)
        await store.receive(.dataReceived(items)) { $0 = .loaded(items) }
        await store.finish()
    }

    @Test("a failure the service marks as permanent cannot be retried, only dismissed")
    func permanentFailure() async throws {
        var io = IOHandlers()
        io.register(FetchItems.self) { _ in throw IOFailure(.rejected, "no such list") }
        let store = TestStore(DataLoader.self, io: io)

        await store.send(.load) { $0 = .loading }
        await store.receive(.loadFailed(message: "no such list", canRetry: false)) {
            $0 = .error(message: "no such list", canRetry: false)
        }
        await store.sendUnhandled(.retry)
        await store.send(.dismiss) { $0 = .idle }
        await store.finish()
    }

    @Test("reload while loading replaces the fetch in flight: only the newest result is delivered")
    func reloadWhileLoading() async throws {
        let fetches = PendingCalls<FetchItems>()
        let store = TestStore(DataLoader.self, io: handlers(fetches))

        await store.send(.load) { $0 = .loading }
        let stale = try #require(await fetches.next())
        await store.send(.reload)
        #expect(await stale.cancellation(), "the replaced fetch must be cancelled")
        let newest = try #require(await fetches.next())
        #expect(newest.request == FetchItems(forceRefresh: true))

        // The stale call answers first and ignores its cancellation; the host must drop it.
        await stale.succeed(items)
        await newest.succeed(fresh)
        await store.receive(.dataReceived(fresh)) { $0 = .loaded(fresh) }
        #expect(fetches.count == 2)
        await store.finish()
    }

    @Test("reload from loaded fetches fresh data")
    func reloadFromLoaded() async throws {
        let fetches = PendingCalls<FetchItems>()
        let store = TestStore(DataLoader.self, io: handlers(fetches))

        await store.send(.load) { $0 = .loading }
        let load = try #require(await fetches.next())
        await load.succeed(items)
        await store.receive(.dataReceived(items)) { $0 = .loaded(items) }

        await store.send(.reload) { $0 = .loading }
        let reload = try #require(await fetches.next())
        #expect(reload.request.forceRefresh)
        await reload.succeed(fresh)
        await store.receive(.dataReceived(fresh)) { $0 = .loaded(fresh) }
        await store.finish()
    }

    private func handlers(_ fetches: PendingCalls<FetchItems>) -> IOHandlers {
        var io = IOHandlers()
        io.register(FetchItems.self) { try await fetches.handle($0) }
        return io
    }
}

// MARK: - Helpers shared by the example suites

/// JSON-encodes and decodes `value`, as a value crossing a process boundary would be.
func roundTrip<T: Codable>(_ value: T) throws -> T {
    try JSONDecoder().decode(T.self, from: JSONEncoder().encode(value))
}

