// Seed 004, TCA-SM: "IO Mocking", "Pure Function Testing" and the "Action Mapping Pattern"'s
// `Action`, as written. The feature's states, inputs and reducers are the reader's, in the
// extension below; `Feature` (the pure test's) is this feature; `ChildFeature` is the reader's.
// "Standard Body Implementation" is the feature's `body`, as written.
import Grove
import GroveTCA
import protocol GroveTCA.StateMachine
import Testing

// Seed text
struct MockFeature: StateMachine {
    let mockResults: [IOEffect: IOResult]

    func runIOEffect(_ effect: IOEffect) async -> IOResult? {
        mockResults[effect]
    }
}
// End of seed text

extension MockFeature {
    enum State: Equatable { case idle, loading, loaded(String), failed }
    enum Input { case load }
    enum IOEffect: Hashable { case fetchData }
    enum IOResult: Equatable { case dataFetched(String), fetchFailed }

    static var initialState: State { .idle }

    static func reduceInput(_ state: State, _ input: Input) -> Transition {
        switch (state, input) {
        case (.idle, .load), (.failed, .load): return transition(.loading, effect: .fetchData)
        default: return undefined
        }
    }

    static func reduceIOResult(_ state: State, _ ioResult: IOResult) -> Transition {
        switch (state, ioResult) {
        case (.loading, .dataFetched(let data)): return nextState(.loaded(data))
        case (.loading, .fetchFailed): return nextState(.failed)
        default: return undefined
        }
    }

    // Seed text
    enum Action: MappableAction {
        case input(Input)
        case ioResult(IOResult)
        case childAction(ChildFeature.Action)  // Non-SM reducer

        static func map(_ action: Self) -> OneOfTwo<Input, IOResult>? {
            switch action {
            case .input(let input): .left(input)
            case .ioResult(let result): .right(result)
            case .childAction: nil  // Handled separately
            }
        }
    }
    // End of seed text
}

// "Standard Body Implementation", as written: the feature's reducer for every action.
extension MockFeature {
    // Seed text
    var body: some Reducer<State, Action> {
        Reduce { state, action in
            let transition = Self.reduce(state, action)
            return apply(transition, to: &state)
        }
    }
    // End of seed text
}

/// Equatable, for `ReducerTestStore` (`CompositionTests`).
extension MockFeature.Action: Equatable {}

/// The action's case paths, as TCA's `@CasePathable` would write them, so that a `Scope` reaches
/// `childAction` (`MappableActionScopeTests`).
extension MockFeature.Action: CasePathable {
    struct AllCasePaths {
        var childAction: CasePath<MockFeature.Action, ChildFeature.Action> {
            CasePath(MockFeature.Action.childAction) { if case .childAction(let action) = $0 { action } else { nil } }
        }
    }
    static var allCasePaths: AllCasePaths { AllCasePaths() }
}

// Seed text
func testStateTransitions() {
    // Synchronous, deterministic tests
    let result = Feature.reduceInput(.idle, .load)
    XCTAssertEqual(result.0, .loading)
    XCTAssertEqual(result.1, .fetchData)
}
// End of seed text
