/// A type that names one ``StateMachine`` value as its machine, so that the machine can be hosted
/// by type: on a worker, in `MachineHost`, in `TestStore`, snapshotted.
///
/// A `StateMachine` value is the usual way to write StateMachinePackage's style, and
/// `AsyncStateMachine` runs one. A host that starts instances by type cannot take a value, so a
/// program names it statically; its side effects capture what they need from there:
/// ```swift
/// enum Light: StateMachineProgram {
///     enum State: Codable, Sendable { case off, on }
///     enum Event: Codable, Sendable { case toggle }
///     static var stateMachine: StateMachine<State, Event> {
///         StateMachine(initial: .off) { state, event in
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

    /// The machine: its initial state and its transitions.
    static var stateMachine: StateMachine<State, Event> { get }
}

/// Runs a ``StateMachineProgram`` as a Grove ``Machine``: its state is the program's state, its
/// initial state the machine's `initial`, so it can be hosted anywhere a `Machine` can.
public enum StaticStateMachine<P: StateMachineProgram>: Machine {
    public typealias State = P.State
    public typealias Event = P.Event

    /// The machine's initial state.
    ///
    /// A program's transitions must be synchronous: a host by type answers each event with the
    /// state it committed, in the event's turn (on a worker, on its I/O thread), and a transition
    /// that awaits has none to give then. A program whose `stateMachine` awaits stops here, when
    /// its first host is made, naming `AsyncStateMachine`, which runs it.
    public static var initialState: P.State {
        let machine = P.stateMachine
        precondition(!machine.awaitsInTransitions, "\(P.self).stateMachine has async transitions, which a machine hosted by type "
                     + "cannot run (see DIALECTS.md); run it with AsyncStateMachine or ViewStateMachine, or make its transitions "
                     + "synchronous and move what they await into a SideEffect")
        return machine.initial
    }

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
