import Grove
import GroveExamples
import GroveRuntime
import GroveTesting
import Testing

@Suite("CacheFeature (TCA-SM, seed 004's decision logic in the reducer)", .timeLimit(.minutes(2)))
struct CacheFeatureTests {
    typealias Feature = CacheFeature

    @Test("a valid cache answers without IO; an invalid one fetches")
    func decision() {
        #expect(Feature.reduceInput(.loaded("cached"), .load) == (.loaded("cached"), nil))
        #expect(Feature.reduceInput(Feature.State(cachedData: "old"), .load)
            == (Feature.State(phase: .loading, cachedData: "old"), .fetchFreshData))
    }

    @Test("the first load fetches, the second answers from the cache, an invalidated cache fetches again")
    func cacheThenFetch() async {
        let fetches = ExampleLog<Int>()
        let store = TestStore(IOMachine<Feature>.self, env: Feature {
            fetches.append(1)
            return "headlines \(fetches.values.count)"
        })
        await store.send(.input(.load)) { $0.phase = .loading }
        await store.receive(.ioResult(.dataFetched("headlines 1"))) { $0 = .loaded("headlines 1") }
        await store.send(.input(.load))      // from the cache: the same state again, no IO
        await store.send(.input(.invalidateCache)) { $0.cacheValid = false }
        await store.send(.input(.load)) { $0.phase = .loading }
        await store.receive(.ioResult(.dataFetched("headlines 2"))) { $0 = .loaded("headlines 2") }
        await store.finish()
        #expect(fetches.values.count == 2)
    }
}

@Suite("AuthenticateFeature (TCA-SM, seed 004's effect abstraction)", .timeLimit(.minutes(2)))
struct AuthenticateFeatureTests {
    typealias Feature = AuthenticateFeature
    static let ada = ExampleHandlers.demoAccounts[0]

    @Test("one authenticate effect: a wrong password or a missing profile is authFailed, both steps sign in")
    func orchestration() async {
        let noProfiles = Feature.API(login: Feature.API.demo.login, fetchProfile: { _ in nil })
        let missing = TestStore(IOMachine<Feature>.self, env: Feature(api: noProfiles))
        await missing.send(.input(.signIn(username: Self.ada.user.email, password: Self.ada.password))) { $0 = .authenticating }
        await missing.receive(.ioResult(.authFailed)) { $0 = .failed }
        await missing.finish()

        let store = TestStore(IOMachine<Feature>.self, env: Feature(api: .demo))
        await store.send(.input(.signIn(username: Self.ada.user.email, password: "wrong"))) { $0 = .authenticating }
        await store.receive(.ioResult(.authFailed)) { $0 = .failed }
        await store.send(.input(.signIn(username: Self.ada.user.email, password: Self.ada.password))) { $0 = .authenticating }
        await store.receive(.ioResult(.authenticated(Self.ada.user))) { $0 = .signedIn(Self.ada.user) }
        await store.send(.input(.signOut)) { $0 = .signedOut }
        await store.finish()
    }
}
