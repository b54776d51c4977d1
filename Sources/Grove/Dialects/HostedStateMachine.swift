/// Runs a ``StateMachine`` value as a Grove ``Machine``, for `AsyncStateMachine` (GroveRuntime)
/// only. Because the transitions are a closure held by a value, the machine travels inside its
/// hosted ``State`` and there is no static initial state: a host made without one would stop. Not
/// public, so that `MachineHost(HostedStateMachine.self)` does not compile outside this package;
/// to host a machine by type (a worker, `TestStore`, snapshots), conform a type to
/// ``StateMachineProgram`` and host ``StaticStateMachine``, or, when its transitions await, to
/// ``AwaitingStateMachineProgram`` and host ``AwaitingStateMachine``.
///
/// Transitions that await run as a task of the host, one at a time: while one awaits, the
/// events that arrive are kept in ``State/waiting``, in order, and the next starts from the state
/// the one before committed, when its result (``Step/transitioned(_:)``) comes back through the
/// mailbox. So events still take effect one at a time, in the order they came; what a
/// transition awaits holds the machine for that long.
package enum HostedStateMachine<S: Sendable, E: Sendable>: Machine {
    /// The machine's current state together with the machine itself.
    package struct State: Sendable {
        /// The current state of the machine.
        package var current: S
        /// The machine whose transitions apply.
        package let machine: StateMachine<S, E>
        /// Counts the transitions that took effect: observers yield ``current`` once per
        /// transition, not when an event only joins ``waiting``.
        package var transitions = 0
        /// Whether an `async` transition is running: events wait until it has committed.
        package var transitioning = false
        /// Events that came while an `async` transition ran, oldest first.
        package var waiting: [E] = []

        /// A machine at its initial state.
        package init(_ machine: StateMachine<S, E>) {
            self.current = machine.initial
            self.machine = machine
        }
    }

    /// What the host processes: the machine's events, and the results of its `async`
    /// transitions.
    package enum Step: Sendable {
        /// One of the machine's events.
        case event(E)
        /// The `async` transition for `event` ended with this result: it takes effect now.
        case transitioned(StateMachine<S, E>.Transition, event: E)

        /// The machine's event this step is for.
        package var event: E {
            switch self {
            case .event(let event), .transitioned(_, let event): event
            }
        }
    }

    package typealias Event = Step

    /// Not available: a closure machine's initial state comes from its value. Pass
    /// `initialState: .init(stateMachine)` to the host.
    package static var initialState: State {
        preconditionFailure(
            "HostedStateMachine has no static initial state; create the host with "
            + "initialState: .init(stateMachine), or use AsyncStateMachine(stateMachine)")
    }

    package static func update(_ state: inout State, event step: Step) -> MachineEffect<HostedStateMachine> {
        switch step {
        case .event(let event):
            switch state.machine.transitions {
            case .immediate(let transitions):
                return take(transitions(state.current, event), into: &state)
            case .awaiting(let transitions):
                guard !state.transitioning else {
                    state.waiting.append(event)
                    return .none
                }
                return begin(transitions, event, in: &state)
            }
        case .transitioned(let transition, _):
            state.transitioning = false
            let effect = take(transition, into: &state)
            guard case .awaiting(let transitions) = state.machine.transitions, !state.waiting.isEmpty else { return effect }
            let next = begin(transitions, state.waiting.removeFirst(), in: &state)
            // An unhandled result is not reported when the next event starts with it: the host
            // runs no effect of an unhandled step, and the next must start.
            if case .unhandled = effect.kind { return next }
            return .merge([effect, next])
        }
    }

    /// Runs an `async` transition from the current state; its result comes back as a step.
    static func begin(_ transitions: @escaping @Sendable (S, E) async -> StateMachine<S, E>.Transition, _ event: E,
                      in state: inout State) -> MachineEffect<HostedStateMachine> {
        state.transitioning = true
        let current = state.current
        return .task { _ in .transitioned(await transitions(current, event), event: event) }
    }

    /// Applies a transition's result: `sameState()` without output is unhandled.
    static func take(_ transition: StateMachine<S, E>.Transition, into state: inout State) -> MachineEffect<HostedStateMachine> {
        switch transition {
        case .sameState(nil):
            return .unhandled
        case .sameState(let output?):
            state.transitions += 1
            return effect(output)
        case .newState(let next, let output):
            state.current = next
            state.transitions += 1
            return output.map(effect) ?? .none
        }
    }

    static func effect(_ sideEffect: SideEffect<S, E>) -> MachineEffect<HostedStateMachine> {
        .task(id: sideEffect.id) { _ in await sideEffect.run().map(Step.event) }
    }
}
