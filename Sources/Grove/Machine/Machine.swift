/// A finite state machine: a state, the events it accepts and a pure transition function.
///
/// `update` is synchronous and performs no I/O. Everything that touches the world is described by
/// the returned ``Effect`` and executed by a host (`MachineHost` in GroveRuntime, or a worker
/// process in the cluster runtime).
///
/// ```swift
/// enum Counter: Machine {
///     enum Event: Sendable, Codable { case increment, reset }
///     static var initialState: Int { 0 }
///     static func update(_ state: inout Int, event: Event) -> Effect {
///         switch event {
///         case .increment: state += 1
///         case .reset: state = 0
///         }
///         return .none
///     }
/// }
/// ```
public protocol Machine: Sendable {
    /// Everything the machine remembers between events. Codable when the machine is snapshotted or
    /// distributed.
    associatedtype State: Sendable
    /// The inputs the machine accepts, from senders and from its own effects.
    associatedtype Event: Sendable
    /// Values the machine emits to observers and, in a topology, to other machines.
    associatedtype Output: Sendable = Never
    /// Dependencies handed to local effects (operations, tasks, streams). Never seen by `update`.
    associatedtype Env: Sendable = Void

    /// The effect type of this machine, so conforming types can write `Effect` unqualified.
    typealias Effect = Grove.MachineEffect<Self>

    /// The state a new instance starts in.
    static var initialState: State { get }

    /// Computes the next state in place and returns the work to do.
    ///
    /// Return ``Effect/unhandled`` when the pair (state, event) has no transition; the state must
    /// then be left untouched. The host reports such pairs to its diagnostics hook.
    /// - Parameters:
    ///   - state: The current state, updated in place.
    ///   - event: The event being processed.
    /// - Returns: The effect describing work for the host to run; `.none` when there is nothing.
    static func update(_ state: inout State, event: Event) -> Grove.MachineEffect<Self>

    /// The transition a host runs for `event`: ``update(_:event:)`` plus what the machine's
    /// model adds around it. Hosts, journal replay and `fsm-check` call this, never `update`.
    /// Defaults to `update` itself, inlined, so a machine that uses nothing more pays nothing;
    /// ``StateScoped`` adds the cancel of its state timeout when the state changes.
    static func step(_ state: inout State, event: Event) -> Grove.MachineEffect<Self>

    /// The effect a host runs when it starts the machine afresh in `state` (its initial state,
    /// or the one the host was given), before the first event; not when it restores the
    /// machine from a snapshot, which carries what that effect started. Nothing runs when
    /// `state` is terminal. Defaults to `.none`; ``StateScoped`` runs the state's
    /// ``StateScoped/enter(_:)``.
    static func startEffect(_ state: State) -> Grove.MachineEffect<Self>

    /// Whether `state` ends the machine's run. Defaults to `state.isTerminal` when `State` is
    /// ``Terminable``, otherwise to `false`.
    static func isTerminal(_ state: State) -> Bool

    /// The output a run reports when the initial state is already terminal. Defaults to `nil`.
    static var initialOutput: Output? { get }

    /// Why `event`, coming from outside the machine (a client, a route), is refused before it
    /// reaches ``update(_:event:)``, or `nil` to accept it. For values no state could use: an
    /// interval too long to schedule, a negative count. The cluster answers a refused event with
    /// an `invalid-event` error carrying this text. Defaults to accepting every event.
    static func refusal(of event: Event) -> String?

    /// Whether ``update(_:event:)`` may start io requests whose type re-issues after a restart
    /// (``IORequest/onInterruption`` is ``IOInterruption/reissue``). Defaults to `false`.
    ///
    /// A durable host re-derives such a request after a restart by running the transition that
    /// started it again, so it keeps the state before each event; that copy is only made for
    /// machine types that say `true` here, since keeping it while `update` changes an array or
    /// dictionary of the state copies that collection whole, on every event. A request of a
    /// `.reissue` type from a machine that says `false` is restored as interrupted, and its host
    /// reports it (`HostDiagnostic.reissueNotKept`).
    /// ```swift
    /// extension DataLoader {
    ///     static var startsReissuableIO: Bool { true }   // its FetchItems re-issues
    /// }
    /// ```
    static var startsReissuableIO: Bool { get }

    /// Events the machine sends itself when a host restores it from a snapshot (a durable
    /// machine after its worker restarted), ahead of everything the snapshot held: for work its
    /// state says was running, which is code and so in no record, to start again. Defaults to
    /// none. `AwaitingStateMachine` uses it to run again the transition that was awaiting.
    static func eventsAfterRestore(_ state: State) -> [Event]

    /// The event that an error thrown by the machine's work becomes, or `nil` to log it and go
    /// on. Errors are events, not stops: work without an error policy of its own (`onError:`,
    /// Tea's `catch:`) that throws ends, and the host hands the machine this event, or, when it
    /// is `nil`, reports ``HostDiagnostic``'s `effectFailed` (logged) with the machine still
    /// running. Defaults to `nil`. A machine that should stop on an error says so on the effect:
    /// `onError: .fail`.
    /// ```swift
    /// static func failureEvent(_ failure: EffectFailure) -> Event? {
    ///     .failed(failure.message)
    /// }
    /// ```
    static func failureEvent(_ failure: EffectFailure) -> Event?
}

extension Machine {
    @inlinable
    public static func step(_ state: inout State, event: Event) -> Grove.MachineEffect<Self> {
        update(&state, event: event)
    }

    @inlinable
    public static func startEffect(_ state: State) -> Grove.MachineEffect<Self> { .none }

    public static func isTerminal(_ state: State) -> Bool { false }
    public static var initialOutput: Output? { nil }
    public static func refusal(of event: Event) -> String? { nil }
    public static var startsReissuableIO: Bool { false }
    public static func eventsAfterRestore(_ state: State) -> [Event] { [] }
    public static func failureEvent(_ failure: EffectFailure) -> Event? { nil }
}

extension Machine where State: Terminable {
    public static func isTerminal(_ state: State) -> Bool { state.isTerminal }
}

/// A state type that knows whether it ends the machine's run.
public protocol Terminable {
    /// `true` when the machine stops after entering this state.
    var isTerminal: Bool { get }
}

/// A state type that never ends the machine's run.
public protocol NonTerminal: Terminable {}

extension NonTerminal {
    public var isTerminal: Bool { false }
}
