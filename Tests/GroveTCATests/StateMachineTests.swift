import Dependencies
import Grove
import GroveTCA
import GroveTea
import GroveTesting
import Testing

/// `StateMachine` as a reducer: `apply(_:to:)`, the standard body, and a feature run by a store,
/// by `ReducerTestStore` and with its dependencies.
@Suite(.timeLimit(.minutes(2)))
struct StateMachineTests {
    struct Loader: GroveTCA.StateMachine {
        enum State: Equatable, Sendable { case idle, loading, loaded(String) }
        enum Input: Equatable, Sendable { case load, reset, nudge }
        enum IOEffect: Equatable, Sendable { case fetch }
        enum IOResult: Equatable, Sendable { case fetched(String) }

        @Dependency(\.greeting) var greeting

        static var initialState: State { .idle }

        static func reduceInput(_ state: State, _ input: Input) -> Transition {
            switch (state, input) {
            case (.idle, .load), (.loaded, .load): transition(.loading, effect: .fetch)
            case (_, .reset): nextState(.idle)
            case (_, .nudge), (.loading, .load): identity
            }
        }

        static func reduceIOResult(_ state: State, _ ioResult: IOResult) -> Transition {
            switch (state, ioResult) {
            case (.loading, .fetched(let text)): nextState(.loaded(text))
            case (.idle, _), (.loaded, _): undefined
            }
        }

        func runIOEffect(_ ioEffect: IOEffect) async -> IOResult? {
            .fetched(greeting)
        }
    }

    @Test("apply sets the new state and starts the IO effect under the feature's id")
    func applyStartsIO() {
        var state = Loader.State.idle
        let effect = Loader().apply(Loader.reduceInput(.idle, .load), to: &state)
        #expect(state == .loading)
        guard case .cancellable(_, let id) = effect else {
            Issue.record("expected the IO effect, got \(effect)")
            return
        }
        #expect(id == Loader.ioEffectID)
    }

    @Test("apply: a new state without an effect cancels the IO in flight; (nil, nil) changes nothing")
    func applyCancelsOnANewState() {
        var state = Loader.State.loading
        let reset = Loader().apply(Loader.reduceInput(.loading, .reset), to: &state)
        #expect(state == .idle)
        guard case .cancel(let id) = reset, id == Loader.ioEffectID else {
            Issue.record("expected the cancel of the IO effect, got \(reset)")
            return
        }
        state = .loading
        let nudged = Loader().apply(Loader.reduceInput(.loading, .nudge), to: &state)
        #expect(state == .loading)
        guard case .none = nudged else {
            Issue.record("expected no effect, got \(nudged)")
            return
        }
    }

    @Test("Without a body, a feature's reducer is the standard body; its Action is IOMachine's event")
    func standardBody() {
        var state = Loader.State.loading
        _ = Loader().reduce(into: &state, action: .ioResult(.fetched("hi")))
        #expect(state == .loaded("hi"))
        let action: Loader.Action = .input(.load)
        #expect(Loader.Action.map(action) == .left(.load))
    }

    @Test("ReducerTestStore runs a feature exhaustively: the IO result is received")
    func testStore() async {
        let store = withDependencies { $0.greeting = "hello" } operation: {
            ReducerTestStore(initialState: Loader.initialState, reduce: Loader().reduceFunction)
        }
        await store.send(.input(.load)) { $0 = .loading }
        await store.receive(.ioResult(.fetched("hello"))) { $0 = .loaded("hello") }
        await store.finish()
    }

    @Test("withDependencies around the feature's making overrides its @Dependency; the test value otherwise")
    func dependencies() async throws {
        let overridden = withDependencies { $0.greeting = "bonjour" } operation: {
            Store(initialState: Loader.initialState) { Loader() }
        }
        try overridden.send(.input(.load))
        #expect(await overridden.firstState(within: .seconds(10)) { $0 == .loaded("bonjour") } != nil)
        await overridden.stop()

        let plain = Store(initialState: Loader.initialState) { Loader() }
        try plain.send(.input(.load))
        #expect(await plain.firstState(within: .seconds(10)) { $0 == .loaded("test greeting") } != nil)
        await plain.stop()
    }

    /// A parent whose body makes its child on every action: the child sees the dependencies of
    /// where the parent's reducer function was made, as a TCA store's children do.
    struct Parent: Reducer {
        struct State: Equatable, Sendable { var heard: [String] = [] }
        enum Action: Equatable, Sendable { case listen }

        var body: some Reducer<State, Action> {
            Scope(state: \.heard, action: CasePath({ $0 }, extract: { $0 })) {
                Listener()
            }
        }
    }

    struct Listener: Reducer {
        @Dependency(\.greeting) var greeting

        func reduce(into state: inout [String], action: Parent.Action) -> Effect<Parent.Action> {
            state.append(greeting)
            return .none
        }
    }

    @Test("A child made in a body sees the dependencies in force where the reducer function was made")
    func childrenSeeTheHostsDependencies() {
        let reduce = withDependencies { $0.greeting = "hej" } operation: { Parent().reduceFunction }
        let (state, _) = reduce(Parent.State(), .listen)
        #expect(state.heard == ["hej"])
    }
}

private enum GreetingKey: DependencyKey {
    static let liveValue = "live greeting"
    static let testValue = "test greeting"
}

extension DependencyValues {
    var greeting: String {
        get { self[GreetingKey.self] }
        set { self[GreetingKey.self] = newValue }
    }
}
