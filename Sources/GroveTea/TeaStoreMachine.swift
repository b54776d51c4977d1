public import Grove

/// SwiftTea's effect type for reducers run by a ``Store``: `Effect<SearchAction>`.
///
/// A store's reducer receives its environment as a parameter and its effect closures capture what
/// they need, so the effect itself has no environment. Programs that let the host hand the
/// environment to effects write a `TeaProgram` with `TeaEffect` instead.
///
/// It lives in this module, not in `Grove`: a module-level `Effect` would hide the `Effect` that
/// `Machine` and `TeaProgram` conformers write unqualified. Import `GroveTea` only where a file
/// writes SwiftTea's free reducers.
public typealias Effect<Action: Sendable> = TeaEffect<Action, Void>

/// The machine a SwiftTea `Store` (GroveRuntime) hosts: the reducer is a closure, so it travels in
/// the hosted state beside the user's state.
///
/// Not public: it has no static initial state, and a `Store` always gives its host one. A program
/// that must run on a worker or be snapshotted is a `TeaProgram` run as `Tea`.
enum TeaStoreMachine<S: Sendable, A: Sendable>: Machine {
    struct State: Sendable {
        /// The user's state.
        var current: S
        let reduce: @Sendable (S, A) -> (S, Effect<A>)

        init(current: S, reduce: @escaping @Sendable (S, A) -> (S, Effect<A>)) {
            self.current = current
            self.reduce = reduce
        }
    }

    typealias Event = A

    /// Unreachable: the type is not public and `Store` always passes its initial state.
    static var initialState: State {
        preconditionFailure("TeaStoreMachine is hosted only by Store, which passes its initial state")
    }

    static func update(_ state: inout State, event: A) -> MachineEffect<TeaStoreMachine> {
        let (next, effect) = state.reduce(state.current, event)
        if case .unhandled = effect { return .unhandled }
        state.current = next
        return effect.machineEffect(for: TeaStoreMachine.self)
    }
}
