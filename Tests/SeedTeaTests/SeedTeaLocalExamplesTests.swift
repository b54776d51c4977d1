// The seed's examples that declare their own `AppState`, `AppAction`, `AppEnvironment` or
// `appReducer`: four of them clash by name, so each runs inside the body of the test that checks
// it, where its declarations are local. The seed's text sits between `// Seed text` and
// `// End of seed text`; the reader's types come before it, the checks after.
import Foundation
import Grove
import GroveTea
import GroveRuntime
import GroveTesting
import Testing

@Suite("Seed 002: SwiftTea, the examples with their own AppState", .timeLimit(.minutes(2)))
struct SeedTeaLocalExamplesTests {
    @Test("Using Environments: the store built from a free reducer, .live and .mock swap the service")
    func environments() async throws {
        // Equatable for the TestStore at the end; the seed leaves both types to the reader.
        struct AppState: Equatable { var data: String? }
        enum AppAction: Sendable, Equatable { case loadData, dataLoaded(String) }

        // Seed text
        // Define your environment with all dependencies
        struct AppEnvironment {
        let apiService: APIServiceProtocol
        let dataStore: DataStoreProtocol
        let analytics: AnalyticsProtocol

        // Live implementation for production
        static let live = AppEnvironment(
        apiService: LiveAPIService(),
        dataStore: UserDefaultsDataStore(),
        analytics: FirebaseAnalytics()
        )

        // Mock implementation for testing
        static let mock = AppEnvironment(
        apiService: MockAPIService(),
        dataStore: InMemoryDataStore(),
        analytics: MockAnalytics()
        )
        }

        // Reducer with environment access
        func appReducer(
        state: AppState,
        action: AppAction,
        environment: AppEnvironment
        ) -> (AppState, Effect<AppAction>) {
        switch action {
        case .loadData:
        return (state, .task {
        let data = try await environment.apiService.fetch()
        return .dataLoaded(data)
        })
                // Not in the seed: its switch names only `.loadData` although `.dataLoaded` is an action
                // too, and Swift requires every case. The smallest addition:
                case .dataLoaded(let data):
                    var newState = state
                    newState.data = data
                    return (newState, .none)
        }
        }

        // Create store with environment
        let store = Store(
        initialState: AppState(),
        reduce: appReducer,
        environment: .live
        )
        // End of seed text

        let mockStore = Store(initialState: AppState(), reduce: appReducer, environment: .mock)
        try store.send(.loadData)
        try mockStore.send(.loadData)
        #expect(await store.firstState(within: .seconds(10)) { $0.data != nil }?.data == "live data")
        #expect(await mockStore.firstState(within: .seconds(10)) { $0.data != nil }?.data == "mock data")
        await store.stop()
        await mockStore.stop()

        // The same reducer and environment in a TestStore, with the Store's arguments.
        let testStore = ReducerTestStore(initialState: AppState(), reduce: appReducer, environment: .mock)
        await testStore.send(.loadData)
        await testStore.receive(.dataLoaded("mock data")) { $0.data = "mock data" }
        await testStore.finish()
    }

    @Test("Mock Dependencies: the live and the test store differ only by their environment")
    func mockDependencies() async throws {
        struct AppState { var data: String? }
        enum AppAction: Sendable { case fetchData, dataLoaded(String) }

        // Seed text
        struct AppEnvironment {
        let networkService: NetworkServiceProtocol
        let locationService: LocationServiceProtocol

        static let live = AppEnvironment(
        networkService: LiveNetworkService(),
        locationService: LiveLocationService()
        )

        static let test = AppEnvironment(
        networkService: MockNetworkService(),
        locationService: MockLocationService()
        )
        }

        // In your reducer
        func appReducer(
        state: AppState, 
        action: AppAction,
        environment: AppEnvironment
        ) -> (AppState, Effect<AppAction>) {
        switch action {
        case .fetchData:
        return (state, .task {
        // Use environment.networkService instead of direct service calls
        let data = try await environment.networkService.fetchData()
        return .dataLoaded(data)
        })
                // Not in the seed (as in "Using Environments"): the case its switch leaves out.
                case .dataLoaded(let data):
                    var newState = state
                    newState.data = data
                    return (newState, .none)
        }
        }

        // Create store with live dependencies
        let store = Store(
        initialState: AppState(),
        reduce: appReducer,
        environment: .live
        )

        // In tests, create store with test dependencies
        let testStore = Store(
        initialState: AppState(),
        reduce: appReducer,
        environment: .test
        )
        // End of seed text

        try store.send(.fetchData)
        try testStore.send(.fetchData)
        #expect(await store.firstState(within: .seconds(10)) { $0.data != nil }?.data == "from the network")
        #expect(await testStore.firstState(within: .seconds(10)) { $0.data != nil }?.data == "from the mock")
        await store.stop()
        await testStore.stop()
    }

    @Test("the convenience initializer: a closure reducer without an environment")
    func simpleStore() async throws {
        struct CounterState { var value: Int }
        enum CounterAction: Sendable { case increment }

        // Seed text
        // One change: the seed writes `Store(`, but nothing in its closure says what `action` is
        // (`case .increment` needs a type), so the line names the store's types.
        let simpleStore = Store<CounterState, CounterAction>(
        initialState: CounterState(value: 0),
        reduce: { state, action in
        var newState = state
        switch action {
        case .increment:
        newState.value += 1
        return (newState, .none)
        }
        }
        )
        // End of seed text

        try simpleStore.send(.increment)
        try simpleStore.send(.increment)
        #expect(await simpleStore.firstState(within: .seconds(10)) { $0.value == 2 } != nil)
        await simpleStore.stop()
    }

    @Test("Testing Reducers: the seed's testCounterIncrement() passes")
    func counterIncrement() {
        struct AppState { var counter: Int }
        enum AppAction: Sendable { case increment }
        func appReducer(state: AppState, action: AppAction) -> (AppState, Effect<AppAction>) {
            (AppState(counter: state.counter + 1), .none)
        }

        // Seed text
        func testCounterIncrement() {
        let initialState = AppState(counter: 0)
        let (newState, effect) = appReducer(state: initialState, action: .increment)

        XCTAssertEqual(newState.counter, 1)

        switch effect {
        case .none:
        XCTAssert(true) // Expected no effect
        default:
        XCTFail("Expected no effect")
        }
        }
        // End of seed text

        testCounterIncrement()
    }
}
