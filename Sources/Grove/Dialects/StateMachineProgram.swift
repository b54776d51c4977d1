/// A type that names one machine in StateMachinePackage's style, so that it can be hosted by
/// type: on a worker, in `MachineHost`, in `TestStore`, snapshotted.
///
/// A `StateMachine` value is the usual way to write StateMachinePackage's style, and
/// `AsyncStateMachine` runs one. A host that starts instances by type cannot take a value, so a
/// program names it statically, as a ``SynchronousStateMachine`` (the same initializer, with
/// transitions that cannot await); its side effects capture what they need from there:
/// ```swift
/// enum Light: StateMachineProgram {
///     enum State: Codable, Sendable { case off, on }
///     enum Event: Codable, Sendable { case toggle }
///     static var stateMachine: SynchronousStateMachine<State, Event> {
///         SynchronousStateMachine(initial: .off) { state, event in
///             .newState(state == .off ? .on : .off)
///         }
///     }
/// }
/// worker.register(StaticStateMachine<Light>.self, as: "Light")
/// ```
public protocol StateMachineProgram: Sendable {
    /// The machine's states. Codable to run on a worker.
    associatedtype State: Sendable
    /// The machine's events. Codable to run on a worker.
    associatedtype Event: Sendable

    /// The machine: its initial state and its transitions, synchronous. A closure that awaits
    /// does not compile here: name such a machine in an ``AwaitingStateMachineProgram``.
    static var stateMachine: SynchronousStateMachine<State, Event> { get }
}

/// A ``StateMachine`` whose transitions cannot await, so that it can be hosted by type
/// (``StateMachineProgram``): its type says so, and a transition closure that awaits is refused
/// by the compiler (no async closure converts to its synchronous parameter) rather than when a
/// host is made.
///
/// A host by type answers each event with the state the event committed, in its turn (on a
/// worker, on the I/O thread that writes the reply and the durable record), and a transition that
/// awaits has none to give then. Anything that awaits belongs in a ``SideEffect``.
public struct SynchronousStateMachine<State: Sendable, Event: Sendable>: Sendable {
    /// The state the machine starts in.
    public let initial: State
    private let transitions: @Sendable (State, Event) -> StateMachine<State, Event>.Transition

    /// Creates a machine from its initial state and its transitions.
    /// - Parameters:
    ///   - initial: The state the machine starts in.
    ///   - transitions: The next state and side effect for a state and an event: pure and
    ///     synchronous.
    public init(initial: State, transitions: @escaping @Sendable (State, Event) -> StateMachine<State, Event>.Transition) {
        self.initial = initial
        self.transitions = transitions
    }

    /// The same machine as a ``StateMachine`` value, for `AsyncStateMachine` and
    /// `ViewStateMachine`.
    public var stateMachine: StateMachine<State, Event> {
        StateMachine(initial: initial, transitions: transitions)
    }

    /// The transition for `event` in `state`.
    public func reduce(_ state: State, _ event: Event) -> StateMachine<State, Event>.Transition {
        transitions(state, event)
    }
}

/// Runs a ``StateMachineProgram`` as a Grove ``Machine``: its state is the program's state, its
/// initial state the machine's `initial`, so it can be hosted anywhere a `Machine` can.
public enum StaticStateMachine<P: StateMachineProgram>: Machine {
    public typealias State = P.State
    public typealias Event = P.Event

    /// The machine's initial state.
    public static var initialState: P.State { P.stateMachine.initial }

    public static func update(_ state: inout P.State, event: P.Event) -> MachineEffect<StaticStateMachine> {
        switch P.stateMachine.reduce(state, event) {
        case .sameState(nil):
            return .unhandled
        case .sameState(let output?):
            return effect(output)
        case .newState(let next, let output):
            state = next
            return output.map(effect) ?? .none
        }
    }

    static func effect(_ sideEffect: SideEffect<P.State, P.Event>) -> MachineEffect<StaticStateMachine> {
        .task(id: sideEffect.id) { _ in await sideEffect.run() }
    }
}
