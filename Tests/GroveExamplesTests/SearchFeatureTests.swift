import Grove
import GroveExamples
import GroveRuntime
import GroveTesting
import Testing

@Suite("SearchFeature (TCA-SM dialect)", .timeLimit(.minutes(2)))
struct SearchFeatureTests {
    @Test("a search while loading replaces the search; clear leaves loading")
    func pureTransitions() {
        let replaced = SearchFeature.reduceInput(.loading(query: "o"), .search("oak"))
        #expect(replaced.0 == .loading(query: "oak"))
        #expect(replaced.1 == .search("oak"))
        let cleared = SearchFeature.reduceInput(.loading(query: "oak"), .clear)
        #expect(cleared.0 == .idle)
        #expect(cleared.1 == nil)
        let ignored = SearchFeature.reduceIOResult(.idle, .results(["Oak"]))
        #expect(ignored.0 == nil && ignored.1 == nil)
    }

    @Test("the search runs on the instance and its results arrive; clear goes back to idle")
    func searchAndClear() async {
        let store = TestStore(IOMachine<SearchFeature>.self, env: .inMemory(["Oak", "Oakmoss", "Rowan"]))
        await store.send(.input(.search("oak"))) { $0 = .loading(query: "oak") }
        await store.receive(.ioResult(.results(["Oak", "Oakmoss"]))) { $0 = .loaded(["Oak", "Oakmoss"]) }
        await store.send(.input(.clear)) { $0 = .idle }
        await store.finish()
    }

    @Test("clearing while loading cancels the search: its results never arrive")
    func clearCancels() async throws {
        let searches = PendingCalls<TitleSearch>()
        let feature = SearchFeature { query in (try? await searches.handle(TitleSearch(query: query))) ?? [] }
        let store = TestStore(IOMachine<SearchFeature>.self, env: feature)
        await store.send(.input(.search("oak"))) { $0 = .loading(query: "oak") }
        let call = try #require(await searches.next())
        await store.send(.input(.clear)) { $0 = .idle }
        #expect(await call.cancellation(), "leaving loading must cancel the search")
        await call.succeed(["Oak"])
        await store.finish()
    }

    @Test("as RemoteIOMachine the search is an io request, served by the feature's instance")
    func remoteSearch() async {
        var state = SearchFeature.State.loading(query: "o")
        let effect = RemoteIOMachine<SearchFeature>.update(&state, event: .input(.search("oak")))
        #expect(state == .loading(query: "oak"))
        #expect(effect.shape == .io(id: IOMachine<SearchFeature>.ioEffectID, SearchFeature.IOEffect.search("oak")))
        #expect(RemoteIOMachine<SearchFeature>.update(&state, event: .input(.clear)).shape == .cancel(IOMachine<SearchFeature>.ioEffectID))

        var io = IOHandlers()
        io.register(feature: SearchFeature.inMemory(["Oak", "Oakmoss", "Rowan"]))
        let store = TestStore(RemoteIOMachine<SearchFeature>.self, io: io)
        await store.send(.input(.search("row"))) { $0 = .loading(query: "row") }
        await store.receive(.ioResult(.results(["Rowan"]))) { $0 = .loaded(["Rowan"]) }
        await store.finish()
    }

    @Test("a request that produced no result fails the search back to idle")
    func remoteFailure() {
        let failed = SearchFeature.ioFailed(.search("oak"), IOFailure(.workerLost, "the io worker went away"))
        #expect(failed == .searchFailed("the io worker went away"))
        let back = SearchFeature.reduceIOResult(.loading(query: "oak"), failed)
        #expect(back.0 == .idle)
        #expect(back.1 == nil)
    }

    /// A search the test answers by hand.
    struct TitleSearch: IORequest {
        typealias Response = [String]
        var query: String
    }
}
