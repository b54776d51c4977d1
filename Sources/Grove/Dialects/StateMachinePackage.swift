/// A state machine in StateMachinePackage's style: an initial state and a transition closure.
///
/// The closure is a value, so it can capture the side effects it returns (a `load` function, an
/// API client): that is how this style injects dependencies.
/// ```swift
/// func makeStateMachine(load: Load) -> StateMachine<State, Event> {
///     StateMachine(initial: .idle) { state, event in
///         switch (state, event) {
///         case (.idle, .loadingWasRequested(let id)):
///             return .newState(.loading, output: load(id: id))
///         case (.loading, .loadingHasSucceeded(let value)):
///             return .newState(.loaded(value: value))
///         default:
///             return .sameState()
///         }
///     }
/// }
/// for await state in AsyncStateMachine(makeStateMachine(load: load)) { print(state) }
/// ```
///
/// Unlike StateMachinePackage, transitions are synchronous: Grove requires pure, non-suspending
/// transitions so that a machine processes one event at a time and its states can be replayed.
/// Anything that must await belongs in a ``SideEffect``.
public struct StateMachine<State: Sendable, Event: Sendable>: Sendable {
    /// The state the machine starts in.
    public let initial: State
    let transitions: @Sendable (State, Event) -> Transition

    /// Creates a machine from its initial state and its transitions.
    /// - Parameters:
    ///   - initial: The state the machine starts in.
    ///   - transitions: The next state and side effect for a state and an event. Pure and
    ///     synchronous.
    public init(initial: State, transitions: @escaping @Sendable (State, Event) -> Transition) {
        self.initial = initial
        self.transitions = transitions
    }

    /// The transition for `event` in `state`, for testing the machine without a host.
    public func reduce(_ state: State, _ event: Event) -> Transition { transitions(state, event) }

    /// The result of a transition: the state (the same or a new one) and an optional side effect.
    public enum Transition: Sendable {
        /// The state does not change. Without `output` the event is unhandled in this state: the
        /// host keeps the state, reports the pair to its diagnostics hook and does not repeat the
        /// state to observers.
        case sameState(output: SideEffect<State, Event>? = nil)
        /// The machine moves to a new state and runs `output`, if any.
        case newState(State, output: SideEffect<State, Event>? = nil)

        /// StateMachinePackage's labelled spelling of ``newState(_:output:)``.
        public static func newState(state: State, output: SideEffect<State, Event>? = nil) -> Transition {
            .newState(state, output: output)
        }

        /// The side effect the transition asks for.
        public var output: SideEffect<State, Event>? {
            switch self {
            case .sameState(let output), .newState(_, let output): output
            }
        }
    }
}

/// Async work a transition asks for, producing at most one event.
///
/// ```swift
/// SideEffect(id: "load") {
///     do { return .loadingHasSucceeded(value: try await api.load(id)) }
///     catch { return .loadingHasFailed(message: "\(error)") }
/// }
/// ```
/// `State` only ties the effect to its machine's type, as in StateMachinePackage.
public struct SideEffect<State: Sendable, Event: Sendable>: Sendable {
    /// Names the work: a side effect started under an id in flight replaces the old one, whose
    /// event is then never delivered. `nil` for anonymous work.
    public let id: EffectID?
    let run: @Sendable () async -> Event?

    /// Wraps async work.
    /// - Parameters:
    ///   - id: Names the work for replacement; anonymous by default.
    ///   - run: The work. Errors must become events: the closure cannot throw.
    public init(id: EffectID? = nil, _ run: @escaping @Sendable () async -> Event?) {
        self.id = id
        self.run = run
    }

    /// Runs the work directly, for tests.
    public func callAsFunction() async -> Event? { await run() }
}

/// Runs a ``StateMachine`` value as a Grove ``Machine``, for `AsyncStateMachine` (GroveRuntime)
/// only. Because the transitions are a closure held by a value, the machine travels inside its
/// hosted ``State`` and there is no static initial state: a host made without one would stop. Not
/// public, so that `MachineHost(HostedStateMachine.self)` does not compile outside this package;
/// to host a machine by type (a worker, `TestStore`, snapshots), conform a type to
/// ``StateMachineProgram`` and host ``StaticStateMachine``.
package enum HostedStateMachine<S: Sendable, E: Sendable>: Machine {
    /// The machine's current state together with the machine itself.
    package struct State: Sendable {
        /// The current state of the machine.
        package var current: S
        /// The machine whose transitions apply.
        package let machine: StateMachine<S, E>

        /// A machine at its initial state.
        package init(_ machine: StateMachine<S, E>) {
            self.current = machine.initial
            self.machine = machine
        }
    }

    package typealias Event = E

    /// Not available: a closure machine's initial state comes from its value. Pass
    /// `initialState: .init(stateMachine)` to the host.
    package static var initialState: State {
        preconditionFailure(
            "HostedStateMachine has no static initial state; create the host with "
            + "initialState: .init(stateMachine), or use AsyncStateMachine(stateMachine)")
    }

    package static func update(_ state: inout State, event: E) -> MachineEffect<HostedStateMachine> {
        switch state.machine.transitions(state.current, event) {
        case .sameState(nil):
            return .unhandled
        case .sameState(let output?):
            return effect(output)
        case .newState(let next, let output):
            state.current = next
            return output.map(effect) ?? .none
        }
    }

    static func effect(_ sideEffect: SideEffect<S, E>) -> MachineEffect<HostedStateMachine> {
        .task(id: sideEffect.id) { _ in await sideEffect.run() }
    }
}
