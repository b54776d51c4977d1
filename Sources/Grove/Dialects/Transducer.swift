/// A machine written as Oak's effect-free `Transducer`: `update` changes the state and returns
/// nothing.
///
/// Conform a transducer written for Oak unchanged and run it as ``OakTransducer``:
/// ```swift
/// enum Turnstile: Transducer {
///     enum State: NonTerminal { case locked, unlocked }
///     enum Event { case coin, push }
///     static func update(_ state: inout State, event: Event) -> Void {
///         switch (state, event) {
///         case (.locked, .coin): state = .unlocked
///         case (.unlocked, .push): state = .locked
///         default: break
///         }
///     }
/// }
/// extension Turnstile { static var initialState: State { .locked } }
/// let host = MachineHost(OakTransducer<Turnstile>.self)
/// ```
///
/// Oak handed the initial state to each run; Grove's hosts, test store and workers start
/// instances of a type by name, so the type names it: ``initialState`` is a requirement, and a
/// transducer without one does not compile as a `Transducer`. An extension beside the seed's text
/// is enough, as above.
///
/// Every event counts as handled, as in Oak: a `default: break` ignores the pair without a trace.
/// Write an ``EffectTransducer`` and return ``MachineEffect/unhandled`` to have the host report
/// such pairs.
public protocol Transducer: Sendable {
    /// Everything the transducer remembers; says whether it ends the run.
    associatedtype State: Terminable & Sendable
    /// The inputs the transducer accepts.
    associatedtype Event: Sendable

    /// The state a new instance starts in.
    static var initialState: State { get }

    /// Computes the next state in place. Pure: no effects, no I/O.
    /// - Parameters:
    ///   - state: The current state, updated in place.
    ///   - event: The event being processed.
    static func update(_ state: inout State, event: Event)
}

/// Runs a ``Transducer`` as a Grove ``Machine``: `MachineHost(OakTransducer<LoginFlow>.self)`.
///
/// The machine has no environment and no output; every transition's effect is `.none`.
public enum OakTransducer<T: Transducer>: Machine {
    public typealias State = T.State
    public typealias Event = T.Event

    public static var initialState: T.State { T.initialState }

    @inlinable
    public static func update(_ state: inout T.State, event: T.Event) -> MachineEffect<OakTransducer<T>> {
        T.update(&state, event: event)
        return .none
    }

    public static func isTerminal(_ state: T.State) -> Bool { state.isTerminal }
}
