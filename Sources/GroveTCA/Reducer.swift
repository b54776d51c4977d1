public import Grove
public import GroveTea

/// A feature's logic, TCA's `Reducer` without TCA: the state it owns, the actions it takes, and
/// either ``reduce(into:action:)`` or a ``body`` composed of other reducers.
///
/// ```swift
/// struct Counter: Reducer {
///     var body: some Reducer<Int, CounterAction> {
///         Reduce { count, action in
///             count += 1
///             return .none
///         }
///     }
/// }
/// ```
/// A reducer runs on Grove through its ``reduceFunction``, the reducer a SwiftTea `Store`, a
/// worker's `register(_:initialState:reduce:)` and `ReducerTestStore` run: a Grove `Machine`, so
/// hosting, workers, durability and the test kit take it as it is. Its effects are GroveTea's
/// `Effect<Action>` (`TeaEffect<Action, Void>`).
public protocol Reducer<State, Action> {
    /// What the feature remembers.
    associatedtype State: Sendable
    /// What the feature receives, from outside and from its own effects.
    associatedtype Action: Sendable
    /// The reducers ``body`` composes; `Never` for a reducer that writes ``reduce(into:action:)``.
    associatedtype Body

    /// Changes `state` for `action` and returns the work to do.
    func reduce(into state: inout State, action: Action) -> Effect<Action>

    /// The reducers this one runs, in order, for every action: ``Reduce``, ``Scope`` and other
    /// reducers. Their state changes apply in order and their effects are merged.
    @ReducerBuilder<State, Action> var body: Body { get }
}

extension Reducer where Body == Never {
    /// A reducer that writes ``reduce(into:action:)`` has no body.
    public var body: Never {
        fatalError("\(Self.self) has no body: it writes reduce(into:action:); call that instead")
    }
}

extension Reducer where Body: Reducer, Body.State == State, Body.Action == Action {
    /// Runs the ``body``.
    public func reduce(into state: inout State, action: Action) -> Effect<Action> {
        body.reduce(into: &state, action: action)
    }
}

/// A reducer written as a closure: `Reduce { state, action in … return .none }`.
public struct Reduce<State: Sendable, Action: Sendable>: Reducer {
    let run: (inout State, Action) -> Effect<Action>

    /// A reducer that runs `reduce` for every action.
    /// - Parameter reduce: Changes the state in place and returns the work to do.
    public init(_ reduce: @escaping (inout State, Action) -> Effect<Action>) {
        run = reduce
    }

    /// Runs the closure.
    public func reduce(into state: inout State, action: Action) -> Effect<Action> {
        run(&state, action)
    }
}

/// Two reducers run one after the other: the second sees the state the first left, and their
/// effects are merged. What ``ReducerBuilder`` makes of a body of several reducers.
public struct CombinedReducers<First: Reducer, Second: Reducer>: Reducer
where First.State == Second.State, First.Action == Second.Action {
    let first: First
    let second: Second

    /// Runs the first reducer, then the second, and merges their effects.
    public func reduce(into state: inout First.State, action: First.Action) -> Effect<First.Action> {
        let firstEffect = first.reduce(into: &state, action: action)
        let secondEffect = second.reduce(into: &state, action: action)
        return Effect.merging(firstEffect, secondEffect)
    }
}

extension TeaEffect {
    /// `first` and `second` together, without a `.merge` around a single one (so a lone effect
    /// keeps its shape, and its id, in `ReducerTestStore` and `inFlightEffects`).
    static func merging(_ first: TeaEffect, _ second: TeaEffect) -> TeaEffect {
        switch (first, second) {
        case (.none, _): second
        case (_, .none): first
        default: .merge([first, second])
        }
    }
}

/// Builds a ``Reducer/body``: the reducers written one per line run in that order.
@resultBuilder
public enum ReducerBuilder<State: Sendable, Action: Sendable> {
    /// A reducer written on a line of the body.
    public static func buildExpression<R: Reducer>(_ reducer: R) -> R where R.State == State, R.Action == Action {
        reducer
    }

    /// The body's first reducer.
    public static func buildPartialBlock<R: Reducer>(first: R) -> R where R.State == State, R.Action == Action {
        first
    }

    /// The reducers so far, then `next`.
    public static func buildPartialBlock<First: Reducer, Next: Reducer>(accumulated: First, next: Next)
        -> CombinedReducers<First, Next>
    where First.State == State, First.Action == Action, Next.State == State, Next.Action == Action {
        CombinedReducers(first: accumulated, second: next)
    }
}
