/// A program written in SwiftTea's style: a pure reducer from `(State, Action)` to the next state
/// and a ``TeaEffect``.
///
/// ```swift
/// enum Counter: TeaProgram {
///     struct State: Sendable { var value = 0 }
///     enum Action: Sendable { case increment, incrementLater }
///     static var initialState: State { State() }
///     static func reduce(_ state: State, _ action: Action) -> (State, Effect) {
///         switch action {
///         case .increment:
///             var next = state
///             next.value += 1
///             return (next, .none)
///         case .incrementLater:
///             return (state, .task { try await Task.sleep(for: .seconds(1)); return .increment })
///         }
///     }
/// }
/// let host = MachineHost(Tea<Counter>.self)
/// ```
///
/// SwiftTea passed the environment to the reducer, whose effect closures captured it. Grove keeps
/// reducers free of dependencies: effect closures receive the environment the host was created
/// with (`MachineHost(Tea<App>.self, env: .live)`), and the reducer never sees it.
public protocol TeaProgram: Sendable {
    /// Everything the program remembers.
    associatedtype State: Sendable
    /// The inputs the program accepts, from senders and from its own effects.
    associatedtype Action: Sendable
    /// Dependencies handed to effect closures; none by default.
    associatedtype Environment: Sendable = Void

    /// The effect type of this program, so conforming types can write `Effect` unqualified.
    typealias Effect = TeaEffect<Action, Environment>

    /// The state a new instance starts in.
    static var initialState: State { get }

    /// Computes the next state and the work to do. Pure: no I/O, no dependencies.
    /// - Parameters:
    ///   - state: The current state.
    ///   - action: The action being processed.
    /// - Returns: The next state and the effect for the host to run.
    static func reduce(_ state: State, _ action: Action) -> (State, TeaEffect<Action, Environment>)

    /// Whether `state` ends the program's run. Defaults to `false`: SwiftTea programs run until
    /// stopped.
    static func isTerminal(_ state: State) -> Bool

    /// Whether ``reduce(_:_:)`` may return `.io` requests that re-issue after a restart:
    /// ``Machine/startsReissuableIO``. Defaults to `false`.
    static var startsReissuableIO: Bool { get }

    /// The action an error thrown by an effect without `catch:` becomes, or `nil` to log it
    /// with the program still running: ``Machine/failureEvent(_:)``. Defaults to `nil`.
    static func failureEvent(_ failure: EffectFailure) -> Action?
}

extension TeaProgram {
    public static func isTerminal(_ state: State) -> Bool { false }
    public static var startsReissuableIO: Bool { false }
    public static func failureEvent(_ failure: EffectFailure) -> Action? { nil }
}

/// Runs a ``TeaProgram`` as a Grove ``Machine``: `MachineHost(Tea<MyProgram>.self, env: .live)`.
public enum Tea<P: TeaProgram>: Machine {
    public typealias State = P.State
    public typealias Event = P.Action
    public typealias Env = P.Environment

    public static var initialState: P.State { P.initialState }

    public static func update(_ state: inout P.State, event: P.Action) -> MachineEffect<Tea<P>> {
        let (next, effect) = P.reduce(state, event)
        if case .unhandled = effect { return .unhandled }
        state = next
        return effect.machineEffect(for: Tea<P>.self)
    }

    public static func isTerminal(_ state: P.State) -> Bool { P.isTerminal(state) }

    public static var startsReissuableIO: Bool { P.startsReissuableIO }
    public static func failureEvent(_ failure: EffectFailure) -> P.Action? { P.failureEvent(failure) }
}
