import Grove
import GroveExamples
import GroveRuntime
import GroveTesting
import Testing

@Suite("DebouncedSearch (SwiftTea dialect, .after and .io)", .timeLimit(.minutes(2)))
struct DebouncedSearchTests {
    @Test("a keystroke cancels the fetch in flight and restarts the timer")
    func keystrokeRestartsTheTimer() {
        var state = DebouncedSearch.State(query: "o", isPending: true)
        let effect = Tea<DebouncedSearch>.update(&state, event: .queryChanged("oa"))
        #expect(state == DebouncedSearch.State(query: "oa", isPending: true))
        #expect(effect.shape.flattened == [
            .cancel(DebouncedSearch.fetchID),
            .timer(id: DebouncedSearch.debounceID, delay: DebouncedSearch.debounce, event: .searchNow),
        ])
    }

    @Test("the pause over, the search is an io request for the catalogue")
    func searchIsIO() {
        var state = DebouncedSearch.State(query: "oa", isPending: true)
        let effect = Tea<DebouncedSearch>.update(&state, event: .searchNow)
        #expect(state.searches == 1)
        #expect(effect.shape == .io(id: DebouncedSearch.fetchID, FetchItems(forceRefresh: false)))
    }

    @Test("a timer or an answer with nothing pending is unhandled")
    func nothingPending() {
        var state = DebouncedSearch.State(query: "oa", matches: [DataItem(id: "1", title: "Oak")], searches: 1)
        #expect(Tea<DebouncedSearch>.update(&state, event: .searchNow).isUnhandled)
        #expect(Tea<DebouncedSearch>.update(&state, event: .itemsLoaded([])).isUnhandled)
        #expect(Tea<DebouncedSearch>.update(&state, event: .loadFailed("offline")).isUnhandled)
        #expect(state == DebouncedSearch.State(query: "oa", matches: [DataItem(id: "1", title: "Oak")], searches: 1))
    }

    @Test("a burst of keystrokes searches once, for the last query, a pause after it")
    func burstSearchesOnce() async {
        let store = TestStore(Tea<DebouncedSearch>.self, io: ExampleHandlers.inMemory())
        await store.send(.queryChanged("r")) { $0 = DebouncedSearch.State(query: "r", isPending: true) }
        await store.advance(by: .milliseconds(200))
        await store.send(.queryChanged("ro")) { $0.query = "ro" }
        await store.advance(by: .milliseconds(299))
        #expect(store.clock.pendingTimerCount == 1, "the first keystroke's timer was replaced")
        await store.advance(by: .milliseconds(1))
        await store.receive(.searchNow) { $0.searches = 1 }
        await store.receive(.itemsLoaded(ExampleHandlers.demoItems)) {
            $0.isPending = false
            $0.matches = [DataItem(id: "3", title: "Rowan")]
        }
        await store.finish()
    }

    @Test("a failed fetch is shown")
    func failureIsShown() async {
        struct Offline: Error, CustomStringConvertible { var description: String { "offline" } }
        var io = IOHandlers()
        io.register(FetchItems.self) { _ in throw Offline() }
        let store = TestStore(Tea<DebouncedSearch>.self, io: io)
        await store.send(.queryChanged("oak")) { $0 = DebouncedSearch.State(query: "oak", isPending: true) }
        await store.advance(by: DebouncedSearch.debounce)
        await store.receive(.searchNow) { $0.searches = 1 }
        await store.receive(.loadFailed("handler for 'FetchItems' threw offline")) {
            $0.isPending = false
            $0.errorMessage = "handler for 'FetchItems' threw offline"
        }
        await store.finish()
    }
}
