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
/// Transitions may be `async`, as StateMachinePackage's are: a closure that awaits runs in the
/// machine's turn, and the events that arrive meanwhile wait behind it, in order (see
/// ``init(initial:transitions:)-async``). Such a machine runs as a value in `AsyncStateMachine`
/// and `ViewStateMachine`, and by type (a worker, `TestStore`) when an
/// ``AwaitingStateMachineProgram`` names it (``AwaitingStateMachine``). A closure that does not
/// await is synchronous, and can also be a ``StateMachineProgram``'s. Prefer that: anything that
/// awaits belongs in a ``SideEffect``, which does not hold the machine.
public struct StateMachine<State: Sendable, Event: Sendable>: Sendable {
    /// The state the machine starts in.
    public let initial: State
    let transitions: Transitions

    /// The transition function, as written: synchronous, or `async`.
    enum Transitions: Sendable {
        case immediate(@Sendable (State, Event) -> Transition)
        case awaiting(@Sendable (State, Event) async -> Transition)
    }

    /// Creates a machine from its initial state and its synchronous transitions.
    /// - Parameters:
    ///   - initial: The state the machine starts in.
    ///   - transitions: The next state and side effect for a state and an event. Pure and
    ///     synchronous: the machine can then run anywhere, a worker included.
    public init(initial: State, transitions: @escaping @Sendable (State, Event) -> Transition) {
        self.initial = initial
        self.transitions = .immediate(transitions)
    }

    /// Creates a machine whose transitions await, as StateMachinePackage's may.
    ///
    /// A transition runs in the machine's turn: while it awaits, the machine takes no other
    /// event; events sent meanwhile (and side effects' events) wait behind it and run after it,
    /// in the order they came, each from the state the one before committed. Such a machine
    /// runs in `AsyncStateMachine` and `ViewStateMachine`, and by type as an
    /// ``AwaitingStateMachineProgram``'s.
    /// ```swift
    /// StateMachine(initial: .idle) { state, event in
    ///     switch (state, event) {
    ///     case (.idle, .check(let id)):
    ///         return await registry.isKnown(id) ? .newState(.known) : .newState(.unknown)
    ///     default:
    ///         return .sameState()
    ///     }
    /// }
    /// ```
    /// - Parameters:
    ///   - initial: The state the machine starts in.
    ///   - transitions: The next state and side effect for a state and an event; may await.
    @_disfavoredOverload
    public init(initial: State, transitions: @escaping @Sendable (State, Event) async -> Transition) {
        self.initial = initial
        self.transitions = .awaiting(transitions)
    }

    /// Whether the transitions await (made with the `async` initializer): such a machine runs
    /// in `AsyncStateMachine`, `ViewStateMachine` and ``AwaitingStateMachine``.
    public var awaitsInTransitions: Bool {
        switch transitions {
        case .immediate: false
        case .awaiting: true
        }
    }

    /// The transition for `event` in `state`, for testing a synchronous machine without a host.
    /// A machine whose transitions await has none to give synchronously: use
    /// ``transition(_:_:)``.
    public func reduce(_ state: State, _ event: Event) -> Transition {
        switch transitions {
        case .immediate(let transitions):
            return transitions(state, event)
        case .awaiting:
            preconditionFailure("this StateMachine's transitions are async: call `await transition(state, event)` instead of reduce")
        }
    }

    /// The transition for `event` in `state`, awaiting it when the transitions are `async`: for
    /// testing any machine without a host.
    public func transition(_ state: State, _ event: Event) async -> Transition {
        switch transitions {
        case .immediate(let transitions): transitions(state, event)
        case .awaiting(let transitions): await transitions(state, event)
        }
    }

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
