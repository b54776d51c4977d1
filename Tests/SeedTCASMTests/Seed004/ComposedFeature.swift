// Seed 004, TCA-SM: "Composed with Child Reducers", the body as written between `// Seed text`
// and `// End of seed text`, with one change (marked): the key paths read `\\.mapState` and
// `\\.mapAction` (markdown's escaping; Swift's is `\.`). Everything else is the reader's: the
// feature's state, inputs and reducers, its `Action` (a `MappableAction` whose case paths a
// `Scope` reads, as TCA's `@CasePathable` macro would write them), the child `MapFeature`, and
// the child effects the body's second `Reduce` returns.
//
// The seed's second `Reduce` calls `Self.reduceInput(state, input).map(Action.mapAction)`: a
// `Transition` is a tuple, and Swift gives tuples no methods, so these are overloads of the
// reader's that return the map's effects (`Effect<MapFeature.Action>`), and `.map` is
// `Effect.map`, which makes them the parent's actions. Swift picks the overload by the `.map`
// after it; `Self.reduce(state, action)` in the third `Reduce` reaches the `Transition` ones.
import Grove
import GroveTCA
import GroveTea
import protocol GroveTCA.StateMachine

struct ComposedFeature: StateMachine {
    struct State: Equatable {
        var phase = Phase.idle
        var mapState = MapFeature.State()
    }
    enum Phase: Equatable { case idle, locating, located(String) }
    enum Input: Equatable { case locate }
    enum IOEffect: Equatable { case fetchLocation }
    enum IOResult: Equatable { case located(String) }

    enum Action: MappableAction, CasePathable, Equatable {
        case input(Input)
        case ioResult(IOResult)
        case mapAction(MapFeature.Action)

        static func map(_ action: Self) -> OneOfTwo<Input, IOResult>? {
            switch action {
            case .input(let input): .left(input)
            case .ioResult(let result): .right(result)
            case .mapAction: nil
            }
        }

        struct AllCasePaths {
            var mapAction: CasePath<Action, MapFeature.Action> {
                CasePath(Action.mapAction) { if case .mapAction(let action) = $0 { action } else { nil } }
            }
        }
        static var allCasePaths: AllCasePaths { AllCasePaths() }
    }

    let locate: @Sendable () async -> String

    static var initialState: State { State() }

    static func reduceInput(_ state: State, _ input: Input) -> Transition {
        switch (state.phase, input) {
        case (.idle, .locate), (.located, .locate): transition(withVar(state, \.phase, .locating), effect: .fetchLocation)
        case (.locating, .locate): undefined
        }
    }

    static func reduceIOResult(_ state: State, _ ioResult: IOResult) -> Transition {
        switch (state.phase, ioResult) {
        case (.locating, .located(let fix)): nextState(withVar(state, \.phase, .located(fix)))
        case (.idle, _), (.located, _): undefined
        }
    }

    func runIOEffect(_ ioEffect: IOEffect) async -> IOResult? {
        .located(await locate())
    }

    // Seed text
    var body: some Reducer<State, Action> {
        // Child reducer scope
        Scope(state: \.mapState, action: \.mapAction) {  // changed: `\\.` is markdown's `\.`
            MapFeature()
        }

        // Handle child interactions (can produce child effects)
        Reduce { state, action in
            switch action {
            case .input(let input):
                Self.reduceInput(state, input).map(Action.mapAction)
            case .ioResult(let ioResult):
                Self.reduceIOResult(state, ioResult).map(Action.mapAction)
            case .mapAction(let mapAction):
                reduceMapEvent(state, mapAction).map(Action.mapAction)
            }
        }

        // StateMachine logic (produces IO effects)
        Reduce { state, action in
            let transition = Self.reduce(state, action)
            return apply(transition, to: &state)
        }
    }
    // End of seed text

    /// The map's part of an input: a new search clears the old pins.
    static func reduceInput(_ state: State, _ input: Input) -> Effect<MapFeature.Action> {
        switch (state.phase, input) {
        case (.idle, .locate), (.located, .locate): .task { .clear }
        case (.locating, .locate): .none
        }
    }

    /// The map's part of an IO result: the fix becomes a pin.
    static func reduceIOResult(_ state: State, _ ioResult: IOResult) -> Effect<MapFeature.Action> {
        switch (state.phase, ioResult) {
        case (.locating, .located(let fix)): .task { .pin(fix) }
        case (.idle, _), (.located, _): .none
        }
    }

    /// What the parent does about the map's own actions: tapping the pin of the current fix
    /// selects it on the map.
    func reduceMapEvent(_ state: State, _ mapAction: MapFeature.Action) -> Effect<MapFeature.Action> {
        guard case .tapped(let pin) = mapAction, case .located(pin) = state.phase else { return .none }
        return .task { .select(pin) }
    }
}

/// The child: pins on a map, one selected.
struct MapFeature: Reducer {
    struct State: Equatable {
        var pins: [String] = []
        var selected: String?
    }
    enum Action: Equatable { case pin(String), clear, tapped(String), select(String) }

    var body: some Reducer<State, Action> {
        Reduce { state, action in
            switch action {
            case .pin(let pin): state.pins.append(pin)
            case .clear: state = State()
            case .tapped: break
            case .select(let pin): state.selected = pin
            }
            return .none
        }
    }
}
