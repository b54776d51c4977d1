public import Grove
public import GroveRuntime
public import Logging

/// SwiftTea's store: a running program built from an initial state and a reducer, a free
/// function or a closure, with or without an environment.
///
/// ```swift
/// func appReducer(state: AppState, action: AppAction, environment: AppEnvironment)
///     -> (AppState, Effect<AppAction>) { ... }
///
/// let store = Store(initialState: AppState(), reduce: appReducer, environment: .live)
/// try store.send(.loadData)
/// ```
/// The store starts at once, runs on a ``MachineHost`` and stops when released or on ``stop()``.
/// The environment is bound to the reducer when the store is made; effect closures capture what
/// they use, as in SwiftTea. The same reducer runs on a worker, with Codable state and actions,
/// registered with the same arguments: `worker.register("App", initialState: AppState(),
/// reduce: appReducer, environment: .live)` (GroveCluster), and in a test as
/// `ReducerTestStore(initialState:reduce:environment:)` (GroveTesting).
public final class Store<State: Sendable, Action: Sendable>: Sendable {
    let host: MachineHost<TeaStoreMachine<State, Action>>

    /// A store whose reducer takes an environment: `Store(initialState:reduce:environment:)`.
    /// - Parameters:
    ///   - initialState: The state the program starts in.
    ///   - reduce: The reducer; `environment` is its third argument for every action.
    ///   - environment: The dependencies, `.live` or `.mock`.
    ///   - io: Handlers for the program's `.io` effects.
    ///   - clock: The clock for `.after` timers; `TestClock` in tests.
    ///   - logger: Defaults to a logger labelled `grove.host`.
    public convenience init<Environment: Sendable>(
        initialState: State,
        reduce: @escaping @Sendable (State, Action, Environment) -> (State, Effect<Action>),
        environment: Environment,
        io: IOHandlers = IOHandlers(),
        clock: any HostClock = WallClock(),
        logger: Logger? = nil
    ) {
        self.init(initialState: initialState, reduce: { state, action in reduce(state, action, environment) },
                  io: io, clock: clock, logger: logger)
    }

    /// A store whose reducer has no dependencies: `Store(initialState:reduce:)`.
    /// - Parameters:
    ///   - initialState: The state the program starts in.
    ///   - reduce: The reducer.
    ///   - io: Handlers for the program's `.io` effects.
    ///   - clock: The clock for `.after` timers; `TestClock` in tests.
    ///   - logger: Defaults to a logger labelled `grove.host`.
    public init(
        initialState: State,
        reduce: @escaping @Sendable (State, Action) -> (State, Effect<Action>),
        io: IOHandlers = IOHandlers(),
        clock: any HostClock = WallClock(),
        logger: Logger? = nil
    ) {
        host = MachineHost(initialState: .init(current: initialState, reduce: reduce), io: io, clock: clock, logger: logger)
        host.start()
    }

    /// Queues `action` for the reducer.
    /// - Throws: `HostError` when the mailbox is full, the store was stopped, or an effect failed.
    public func send(_ action: Action) throws(HostError) { try host.send(action) }

    /// Queues `action` and waits until the reducer has processed it.
    /// - Returns: The state right after `action`.
    /// - Throws: `HostError` when the store was stopped or an effect failed first.
    @discardableResult
    public func sendAndWait(_ action: Action) async throws(HostError) -> State {
        try await host.sendAndWait(action).current
    }

    /// Cancels the effect running under `id`, as the reducer's `.cancel(id)` would: its late
    /// actions are never delivered. A no-op for unknown or finished ids.
    public func cancel(_ id: EffectID) async { await host.cancelEffect(id) }

    /// The current state.
    public var state: State {
        get async { await host.state.current }
    }

    /// The current state followed by every state from now on; finishes when the store stops.
    public func states() async -> AsyncStream<State> {
        let hosted = await host.states()
        return AsyncStream { continuation in
            let task = Task {
                for await state in hosted { continuation.yield(state.current) }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// The first state, from the current one on, that satisfies `condition`.
    /// - Returns: `nil` when none came within `timeout` or the store stopped first.
    public func firstState(
        within timeout: Duration, where condition: @escaping @Sendable (State) -> Bool
    ) async -> State? {
        await host.firstState(within: timeout) { condition($0.current) }?.current
    }

    /// The ids of effects in flight.
    public var inFlightEffects: Set<EffectID> {
        get async { await host.inFlightEffects }
    }

    /// Whether the store has stopped, by ``stop()`` or a failed effect.
    public var hasEnded: Bool {
        get async { await host.hasEnded }
    }

    /// Stops the program: cancels every effect and refuses later actions.
    public func stop() async { await host.stop() }
}
