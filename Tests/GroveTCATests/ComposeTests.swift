import Grove
import GroveTCA
import GroveTea
import Testing

/// `body`, `Reduce` and `Scope`: what runs, in which order, and where effects go.
@Suite(.timeLimit(.minutes(2)))
struct ComposeTests {
    struct Screen: Reducer {
        struct State: Equatable {
            var log: [String] = []
            var child = Child.State()
        }
        enum Action: Equatable, CasePathable {
            case tap
            case child(Child.Action)

            struct AllCasePaths {
                var child: CasePath<Action, Child.Action> {
                    CasePath(Action.child) { if case .child(let action) = $0 { action } else { nil } }
                }
            }
            static var allCasePaths: AllCasePaths { AllCasePaths() }
        }

        var body: some Reducer<State, Action> {
            Reduce { state, action in
                state.log.append("first \(state.child.count)")
                return .none
            }
            Scope(state: \.child, action: \.child) {
                Child()
            }
            Reduce { state, action in
                state.log.append("last \(state.child.count)")
                return action == .tap ? .task { .child(.increment) } : .none
            }
        }
    }

    struct Child: Reducer {
        struct State: Equatable { var count = 0 }
        enum Action: Equatable { case increment, echo }

        func reduce(into state: inout State, action: Action) -> Effect<Action> {
            switch action {
            case .increment:
                state.count += 1
                return .none
            case .echo:
                return .task { .increment }
            }
        }
    }

    @Test("A body's reducers run in order, each on the state the one before left")
    func bodyOrder() {
        var state = Screen.State()
        _ = Screen().reduce(into: &state, action: .child(.increment))
        #expect(state.log == ["first 0", "last 1"], "the scope ran between the two reduces")
        #expect(state.child.count == 1)
    }

    @Test("A scope runs its child only for the child's case; other actions pass by")
    func scopePassesOtherActionsBy() {
        var state = Screen.State()
        let effect = Screen().reduce(into: &state, action: .tap)
        #expect(state.child.count == 0)
        guard case .task = effect else {
            Issue.record("expected the last reduce's task alone, got \(effect)")
            return
        }
    }

    @Test("A child's effects come back as the parent's case")
    func childEffectsAreEmbedded() async throws {
        let store = Store(initialState: Screen.State()) { Screen() }
        try store.send(.child(.echo))
        let state = await store.firstState(within: .seconds(10)) { $0.child.count == 1 }
        #expect(state?.log == ["first 0", "last 0", "first 0", "last 1"], "echo, then its .child(.increment)")
        await store.stop()
    }

    @Test("A Reduce's effect reaches the host; a body's effects are merged")
    func effectsReachTheHost() async throws {
        let store = Store(initialState: Screen.State()) { Screen() }
        try store.send(.tap)
        #expect(await store.firstState(within: .seconds(10)) { $0.child.count == 1 } != nil)
        await store.stop()
    }
}
