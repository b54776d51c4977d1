public import Grove

extension WorkerConfiguration {
    /// Registers a SwiftTea reducer with an environment under `name`, with the arguments a
    /// `Store` takes, so that the reducer a store runs in one process runs on a worker as it is.
    ///
    /// ```swift
    /// func appReducer(state: AppState, action: AppAction, environment: AppEnvironment)
    ///     -> (AppState, Effect<AppAction>) { ... }
    ///
    /// worker.register("App", initialState: AppState(), reduce: appReducer, environment: .live)
    /// ```
    /// Every instance starts at `initialState`. What leaves the worker (replies, snapshots, the
    /// journal, the audit log) is the user's state alone; a durable instance's record decodes
    /// with this reducer bound again, so it comes back with the reducer of the worker that
    /// restores it.
    /// - Parameters:
    ///   - name: The type name topologies use in `machines[].type`.
    ///   - initialState: The state every instance starts in.
    ///   - reduce: The reducer; `environment` is its third argument for every action.
    ///   - environment: The dependencies its effects capture.
    public mutating func register<State, Action, Environment>(
        _ name: String,
        initialState: State,
        reduce: @escaping @Sendable (State, Action, Environment) -> (State, TeaEffect<Action, Void>),
        environment: Environment
    ) where State: Codable & Sendable, Action: Codable & Sendable, Environment: Sendable {
        register(name, initialState: initialState, reduce: { state, action in reduce(state, action, environment) })
    }

    /// Registers a SwiftTea reducer without dependencies under `name`, as
    /// `Store(initialState:reduce:)` takes it.
    /// - Parameters:
    ///   - name: The type name topologies use in `machines[].type`.
    ///   - initialState: The state every instance starts in.
    ///   - reduce: The reducer, a free function or a closure.
    public mutating func register<State, Action>(
        _ name: String,
        initialState: State,
        reduce: @escaping @Sendable (State, Action) -> (State, TeaEffect<Action, Void>)
    ) where State: Codable & Sendable, Action: Codable & Sendable {
        typealias Hosted = TeaStoreMachine<State, Action>
        let start = InstanceStart<Hosted>(
            initialState: Hosted.State(current: initialState, reduce: reduce),
            decoding: { decode in try TeaReducerBinding.bound(to: reduce, decode) })
        add(name, env: (), path: HostedPath<Hosted>(), start: start)
    }
}
