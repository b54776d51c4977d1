import Dependencies
import Foundation
import Grove
import GroveTCA
import GroveTea
import GroveTesting
@testable import SeedTCASMFeatures
import Synchronization
import Testing

/// Seed 004's "Integration Patterns" on GroveTCA: the standard body, the body composed with a
/// child reducer, `MappableAction`'s `childAction` reaching a child through `Scope`, and the
/// seed's features hosted as reducers.
@Suite("Seed 004: composition", .timeLimit(.minutes(2)))
struct CompositionTests {
    @Test("Standard Body Implementation: MockFeature's body runs Self.reduce and apply")
    func standardBody() async {
        let mock = MockFeature(mockResults: [.fetchData: .dataFetched("mocked")])
        let store = ReducerTestStore(initialState: MockFeature.initialState, reduce: mock.reduceFunction)
        await store.send(.input(.load)) { $0 = .loading }
        await store.receive(.ioResult(.dataFetched("mocked"))) { $0 = .loaded("mocked") }
        await store.send(.childAction(.tapped))     // the state machine leaves it alone
        await store.finish()
    }

    /// A parent of MockFeature and ChildFeature: the seed's `Action` reaches the mock by
    /// `MappableAction` and the child by `Scope(action: \.childAction)`.
    struct MockScreen: Reducer {
        struct State: Equatable {
            var feature = MockFeature.initialState
            var taps = 0
        }
        typealias Action = MockFeature.Action
        let mock: MockFeature

        var body: some Reducer<State, Action> {
            Scope(state: \.taps, action: \.childAction) {
                ChildFeature()
            }
            Scope(state: \.feature, action: CasePath({ $0 }, extract: { $0 })) {
                mock
            }
        }
    }

    @Test("MappableAction: childAction reaches the child through Scope, input and ioResult the state machine")
    func childActionThroughScope() async {
        let screen = MockScreen(mock: MockFeature(mockResults: [.fetchData: .dataFetched("mocked")]))
        let store = ReducerTestStore(initialState: MockScreen.State(), reduce: screen.reduceFunction)
        await store.send(.childAction(.tapped)) { $0.taps = 1 }
        await store.send(.input(.load)) { $0.feature = .loading }
        await store.receive(.ioResult(.dataFetched("mocked"))) { $0.feature = .loaded("mocked") }
        await store.send(.childAction(.tapped)) { $0.taps = 2 }
        await store.finish()
    }

    @Test("Composed with Child Reducers: the child scope, the child effects, then the state machine")
    func composedBody() async throws {
        // One action, reduced by the body in order: the Reduce of child effects returns the
        // map's `.clear`; the state machine's starts locating.
        var state = ComposedFeature.State()
        let feature = ComposedFeature { "52.5,13.4" }
        let effect = feature.reduce(into: &state, action: .input(.locate))
        #expect(state.phase == .locating)
        guard case .merge(let effects) = effect, effects.count == 2 else {
            Issue.record("expected the map's effect and the IO effect, got \(effect)")
            return
        }

        let store = Store(initialState: ComposedFeature.initialState) { feature }
        try store.send(.input(.locate))
        let located = await store.firstState(within: .seconds(10)) { $0.phase == .located("52.5,13.4") && !$0.mapState.pins.isEmpty }
        #expect(located?.mapState.pins == ["52.5,13.4"], "the IO result pinned the fix on the map, through .mapAction")
        // The map's own action: Scope runs the child, then the parent's reduceMapEvent answers
        // with the child's `.select`.
        try store.send(.mapAction(.tapped("52.5,13.4")))
        let selected = await store.firstState(within: .seconds(10)) { $0.mapState.selected != nil }
        #expect(selected?.mapState.selected == "52.5,13.4")
        await store.stop()
    }

    @Test("MyFeature as a reducer: withDependencies around its making sets its @Dependency")
    func myFeatureWithDependencies() async throws {
        struct Service: APIService {
            @Dependency(\.locationManager) var locationManager
            func fetchData() async -> MyFeature.IOResult? { .dataFetched(locationManager.lastFix ?? "nowhere") }
        }
        let store = withDependencies { $0.locationManager = FixedLocation(lastFix: "48.9,2.4") } operation: {
            Store(initialState: MyFeature.initialState) { MyFeature(apiService: Service()) }
        }
        try store.send(.input(.load))
        #expect(await store.firstState(within: .seconds(10)) { $0 == .loaded("48.9,2.4") } != nil)
        await store.stop()

        // Without an override, the dependency's test value: no fix.
        let plain = Store(initialState: MyFeature.initialState) { MyFeature(apiService: Service()) }
        try plain.send(.input(.load))
        #expect(await plain.firstState(within: .seconds(10)) { $0 == .loaded("nowhere") } != nil)
        await plain.stop()
    }

    @Test("ErrorHandlingFeature's IO results round-trip as JSON, as they cross processes on a worker")
    func errorHandlingCodable() throws {
        let results: [ErrorHandlingFeature.IOResult] = [
            .dataLoaded(.success(Data("ada".utf8))), .dataLoaded(.failure(.status(503))),
            .userSaved(.success(())), .userSaved(.failure(.diskFull)),
        ]
        for result in results {
            let encoded = try JSONEncoder().encode(result)
            let decoded = try JSONDecoder().decode(ErrorHandlingFeature.IOResult.self, from: encoded)
            #expect(try JSONEncoder().encode(decoded) == encoded, "\(String(decoding: encoded, as: UTF8.self))")
        }
        let saved = try JSONEncoder().encode(ErrorHandlingFeature.IOResult.userSaved(.failure(.diskFull)))
        #expect(String(decoding: saved, as: UTF8.self) == #"{"userSaved":{"failure":{"diskFull":{}}}}"#)
    }
}
