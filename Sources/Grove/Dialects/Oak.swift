/// A machine written in Oak's style: `update` returns an optional effect, `nil` meaning none.
///
/// Conform an Oak transducer to this protocol unchanged and run it as ``Oak``:
/// ```swift
/// enum Poller: EffectTransducer {
///     enum State: NonTerminal { case idle, polling }
///     enum Event { case start, stop, tick }
///     static var initialState: State { .idle }
///     static func update(_ state: inout State, event: Event) -> Effect? {
///         switch (state, event) {
///         case (.idle, .start):
///             state = .polling
///             return Effect(id: "polling") { env, input in
///                 while true { try input.send(.tick); try await Task.sleep(for: .seconds(1)) }
///             }
///         case (.polling, .stop):
///             state = .idle
///             return Effect.cancel(id: "polling")
///         default:
///             return nil
///         }
///     }
/// }
/// let host = MachineHost(Oak<Poller>.self)
/// ```
///
/// `Effect` is Grove's ``MachineEffect``, so every Grove effect is available. Differences from
/// Oak: `.events([a, b])` processes `a` before `b` (Oak processed them in reverse), and returning
/// `nil` for an event the state does not accept counts as handled; return ``MachineEffect/unhandled``
/// to have the host report the pair to its diagnostics hook instead.
public protocol EffectTransducer: Sendable {
    /// Everything the transducer remembers; says whether it ends the run.
    associatedtype State: Terminable & Sendable
    /// The inputs the transducer accepts.
    associatedtype Event: Sendable
    /// Values emitted with ``MachineEffect/output(_:)``; none by default.
    associatedtype Output: Sendable = Never
    /// Dependencies handed to operations (`env` in `Effect(id:) { env, input in ... }`).
    associatedtype Env: Sendable = Void

    /// The effect type of this transducer, so conforming types can write `Effect` unqualified.
    typealias Effect = Grove.MachineEffect<Oak<Self>>

    /// The state a new instance starts in.
    static var initialState: State { get }

    /// Computes the next state in place and returns the work to do, or `nil` for none.
    /// - Parameters:
    ///   - state: The current state, updated in place.
    ///   - event: The event being processed.
    /// - Returns: The effect for the host to run, or `nil` when there is nothing to do.
    static func update(_ state: inout State, event: Event) -> Effect?

    /// The output a run reports when the initial state is already terminal. Defaults to `nil`.
    static var initialOutput: Output? { get }

    /// Why `event`, coming from outside (a client, a route), is refused before it reaches
    /// ``update(_:event:)``; `nil`, the default, accepts it. See ``Machine/refusal(of:)``.
    static func refusal(of event: Event) -> String?

    /// Whether ``update(_:event:)`` may start io requests that re-issue after a restart:
    /// ``Machine/startsReissuableIO``. Defaults to `false`.
    static var startsReissuableIO: Bool { get }

    /// The event an error thrown by an `Effect` without `onError:` becomes, or `nil` to log it
    /// with the transducer still running: ``Machine/failureEvent(_:)``. Defaults to `nil`.
    static func failureEvent(_ failure: EffectFailure) -> Event?
}

extension EffectTransducer {
    public static var initialOutput: Output? { nil }
    public static func refusal(of event: Event) -> String? { nil }
    public static var startsReissuableIO: Bool { false }
    public static func failureEvent(_ failure: EffectFailure) -> Event? { nil }
}

/// Runs an ``EffectTransducer`` as a Grove ``Machine``: `MachineHost(Oak<MyTransducer>.self, env: env)`.
public enum Oak<T: EffectTransducer>: Machine {
    public typealias State = T.State
    public typealias Event = T.Event
    public typealias Output = T.Output
    public typealias Env = T.Env

    public static var initialState: T.State { T.initialState }

    @inlinable
    public static func update(_ state: inout T.State, event: T.Event) -> MachineEffect<Oak<T>> {
        T.update(&state, event: event) ?? .none
    }

    public static func isTerminal(_ state: T.State) -> Bool { state.isTerminal }

    public static var initialOutput: T.Output? { T.initialOutput }

    public static func refusal(of event: T.Event) -> String? { T.refusal(of: event) }
    public static var startsReissuableIO: Bool { T.startsReissuableIO }
    public static func failureEvent(_ failure: EffectFailure) -> T.Event? { T.failureEvent(failure) }
}
