import Dependencies
public import Grove
public import GroveRuntime
public import GroveTea
public import Logging

extension Reducer where Self: Sendable {
    /// This reducer as a SwiftTea reducer function, the form Grove hosts: `Store(initialState:reduce:)`,
    /// a worker's `register(_:initialState:reduce:)` and `ReducerTestStore(initialState:reduce:)`
    /// all take it, and run it as a Grove `Machine`.
    ///
    /// ```swift
    /// worker.register("MyFeature", initialState: MyFeature.initialState, reduce: MyFeature(api: .live).reduceFunction)
    /// ```
    /// The dependencies in force where the function is made (inside `withDependencies`, say)
    /// are in force for every action it reduces, as a TCA store's are, so a child reducer a
    /// `body` makes sees them too.
    public var reduceFunction: @Sendable (State, Action) -> (State, Effect<Action>) {
        withEscapedDependencies { dependencies in
            { state, action in
                dependencies.yield {
                    var state = state
                    let effect = reduce(into: &state, action: action)
                    return (state, effect)
                }
            }
        }
    }
}

extension Store {
    /// A store running `reducer`, as TCA writes it: `Store(initialState: .idle) { Feature() }`.
    /// - Parameters:
    ///   - initialState: The state the feature starts in.
    ///   - io: Handlers for the feature's `.io` effects.
    ///   - clock: The clock for `.after` timers; `TestClock` in tests.
    ///   - logger: Defaults to a logger labelled `grove.host`.
    ///   - reducer: Makes the feature's reducer, once, with the dependencies of the caller.
    public convenience init<R: Reducer & Sendable>(
        initialState: State,
        io: IOHandlers = IOHandlers(),
        clock: any HostClock = WallClock(),
        logger: Logger? = nil,
        reducer: () -> R
    ) where R.State == State, R.Action == Action {
        self.init(initialState: initialState, reduce: reducer().reduceFunction, io: io, clock: clock, logger: logger)
    }
}
