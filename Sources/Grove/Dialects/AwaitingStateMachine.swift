/// A type that names a StateMachinePackage machine whose transitions may await, so that it can
/// be hosted by type: on a worker, in `TestStore`, snapshotted.
///
/// ```swift
/// enum Loader: AwaitingStateMachineProgram {
///     static var stateMachine: StateMachine<State, Event> {
///         StateMachine(initial: .idle) { state, event async in
///             switch (state, event) {
///             case (.idle, .load(let id)):
///                 do { return .newState(.loaded(try await api.value(id))) }
///                 catch { return .newState(.failed("\(error)")) }
///             default:
///                 return .sameState()
///             }
///         }
///     }
/// }
/// worker.register(AwaitingStateMachine<Loader>.self, as: "Loader")
/// ```
/// A program whose transitions never await is better a ``StateMachineProgram``: its events are
/// answered with the state they lead to, in their turn.
public protocol AwaitingStateMachineProgram: Sendable {
    /// The machine's states. Codable to run on a worker.
    associatedtype State: Sendable
    /// The machine's events. Codable to run on a worker.
    associatedtype Event: Sendable

    /// The machine: its initial state and its transitions, which may await.
    static var stateMachine: StateMachine<State, Event> { get }
}

/// Runs an ``AwaitingStateMachineProgram`` as a Grove ``Machine``: a transition that awaits runs
/// as the machine's own task, and its result commits when it comes back.
///
/// The guarantees, as an actor's: events take effect one at a time, each from the state the one
/// before committed, in the order they arrived. An event that arrives while no transition runs
/// starts one (``AwaitingState/inTransition``) and is answered at once with that state: the
/// user's state before the transition. Events that arrive meanwhile wait, in order
/// (``AwaitingState/waiting``). The result comes back as ``AwaitingStep/transitioned(_:event:run:)``
/// and commits; then its side effect starts and the next waiting event starts its transition.
/// A durable machine restored with a transition running runs it again from the committed state
/// (``Machine/eventsAfterRestore(_:)``): at least once, never lost; a result of the run before
/// the restart, should one still arrive, is ignored. Synchronous transitions run inline, as in
/// ``StaticStateMachine``.
public enum AwaitingStateMachine<P: AwaitingStateMachineProgram>: Machine {
    public typealias State = AwaitingState<P.State, P.Event>
    public typealias Event = AwaitingStep<P.State, P.Event>

    public static var initialState: State { AwaitingState(P.stateMachine.initial) }

    public static func update(_ state: inout State, event step: Event) -> MachineEffect<AwaitingStateMachine> {
        switch step {
        case .event(let event):
            guard state.inTransition == nil else {
                state.waiting.append(event)
                return .none
            }
            return start(event, in: &state)
        case .transitioned(let transition, _, let run):
            // A result of a run that a restart superseded: the run after it answers instead.
            guard state.inTransition != nil, run == state.started else { return .none }
            state.inTransition = nil
            var committed = take(transition, into: &state)
            // `sameState()` is unhandled by the program, but this step has ended the
            // transition, a change of state, which `.unhandled` must not make: it is handled,
            // with nothing to run (its trace shows a result with no new state).
            if case .unhandled = committed.kind { committed = .none }
            guard !state.waiting.isEmpty else { return committed }
            let next = start(state.waiting.removeFirst(), in: &state)
            if case .none = committed.kind { return next }
            return .merge([committed, next])
        case .restarted:
            guard let event = state.inTransition else { return .none }
            return begin(event, in: &state)
        }
    }

    /// A transition found running in a restored state runs again.
    public static func eventsAfterRestore(_ state: State) -> [Event] {
        state.inTransition == nil ? [] : [.restarted]
    }

    /// Only the program's events come from outside; results and restarts are the machine's own.
    public static func refusal(of step: Event) -> String? {
        switch step {
        case .event: nil
        case .transitioned, .restarted:
            "'$transitioned' and '$restarted' are the machine's own steps: send one of the program's events"
        }
    }

    /// Runs `event`'s transition: inline when the transitions are synchronous, else as a task.
    static func start(_ event: P.Event, in state: inout State) -> MachineEffect<AwaitingStateMachine> {
        switch P.stateMachine.transitions {
        case .immediate(let transitions):
            return take(transitions(state.current, event), into: &state)
        case .awaiting:
            state.inTransition = event
            return begin(event, in: &state)
        }
    }

    /// Starts the awaiting transition of ``AwaitingState/inTransition`` from the committed state,
    /// as run ``AwaitingState/started`` + 1.
    static func begin(_ event: P.Event, in state: inout State) -> MachineEffect<AwaitingStateMachine> {
        state.started += 1
        let run = state.started
        let current = state.current
        return .task { _ in .transitioned(await P.stateMachine.transition(current, event), event: event, run: run) }
    }

    /// Applies a transition's result: `sameState()` without output is unhandled.
    static func take(_ transition: StateMachine<P.State, P.Event>.Transition,
                     into state: inout State) -> MachineEffect<AwaitingStateMachine> {
        switch transition {
        case .sameState(nil):
            return .unhandled
        case .sameState(let output?):
            return effect(output)
        case .newState(let next, let output):
            state.current = next
            return output.map(effect) ?? .none
        }
    }

    static func effect(_ sideEffect: SideEffect<P.State, P.Event>) -> MachineEffect<AwaitingStateMachine> {
        .task(id: sideEffect.id) { _ in await sideEffect.run().map(AwaitingStep.event) }
    }
}

/// What an ``AwaitingStateMachine`` processes: the program's events, and its own steps.
public enum AwaitingStep<S: Sendable, E: Sendable>: Sendable {
    /// One of the program's events. On the wire, the event itself.
    case event(E)
    /// The awaiting transition for `event`, run number `run`, ended with this result.
    case transitioned(StateMachine<S, E>.Transition, event: E, run: Int)
    /// A host restored the machine with a transition running: run it again.
    case restarted
}

extension AwaitingStep: Redacting {
    /// Secrets of the program's events and of the states its transitions commit, when their
    /// types adopt ``Redacting``.
    public static var holdsSecrets: Bool { Redaction.applies(to: S.self) || Redaction.applies(to: E.self) }

    /// The event, and a committed transition's new state, redacted.
    public var redacted: Self {
        switch self {
        case .event(let event):
            return .event(Redaction.redact(event))
        case .transitioned(.newState(let next, let output), let event, let run):
            return .transitioned(.newState(Redaction.redact(next), output: output), event: Redaction.redact(event), run: run)
        case .transitioned(.sameState(let output), let event, let run):
            return .transitioned(.sameState(output: output), event: Redaction.redact(event), run: run)
        case .restarted:
            return .restarted
        }
    }
}
