/// A feature in TCA-SM's style: pure static reducers for inputs and IO results, and an instance
/// method that runs IO effects with the instance's dependencies.
///
/// ```swift
/// struct Profile: IOStateMachine {
///     enum State: Sendable { case idle, loading, loaded(String), failed }
///     enum Input: Sendable { case load }
///     enum IOEffect: Sendable { case fetch }
///     enum IOResult: Sendable { case fetched(String), fetchFailed }
///     let api: API
///
///     static var initialState: State { .idle }
///     static func reduceInput(_ state: State, _ input: Input) -> Transition {
///         switch (state, input) {
///         case (.idle, .load): transition(.loading, effect: .fetch)
///         default: undefined
///         }
///     }
///     static func reduceIOResult(_ state: State, _ ioResult: IOResult) -> Transition { ... }
///     func runIOEffect(_ ioEffect: IOEffect) async -> IOResult? {
///         do { return .fetched(try await api.name()) } catch { return .fetchFailed }
///     }
/// }
/// let host = MachineHost(IOMachine<Profile>.self, env: Profile(api: .live))
/// try host.send(.input(.load))
/// ```
///
/// The feature value is the machine's `Env`: reducers stay static and cannot reach it. A machine
/// has at most one IO effect in flight; a transition that starts a new one cancels the previous
/// one, whose result is then never delivered ("cancellation implicit in state transitions").
public protocol IOStateMachine: Sendable {
    /// Everything the feature remembers.
    associatedtype State: Sendable
    /// What users and other parts of the app send.
    associatedtype Input: Sendable
    /// A description of IO to perform, interpreted by ``runIOEffect(_:)``.
    associatedtype IOEffect: Sendable
    /// What IO reports back. Errors are results too: ``runIOEffect(_:)`` cannot throw.
    associatedtype IOResult: Sendable

    /// The result of a reducer, so conforming types can write `Transition` unqualified.
    typealias Transition = IOTransition<State, IOEffect>

    /// The state a new instance starts in.
    static var initialState: State { get }

    /// The transition for an input. Pure: no dependencies, no IO.
    static func reduceInput(_ state: State, _ input: Input) -> Transition

    /// The transition for the result of an IO effect. Pure: no dependencies, no IO.
    static func reduceIOResult(_ state: State, _ ioResult: IOResult) -> Transition

    /// Performs an IO effect with the feature's dependencies.
    /// - Returns: The result to feed to ``reduceIOResult(_:_:)``, or `nil` for none.
    func runIOEffect(_ ioEffect: IOEffect) async -> IOResult?

    /// Whether `state` ends the feature's run. Defaults to `false`.
    static func isTerminal(_ state: State) -> Bool
}

extension IOStateMachine {
    public static func isTerminal(_ state: State) -> Bool { false }

    /// No transition for this (state, input) pair: the state stays and the host reports the pair
    /// to its diagnostics hook. (TCA-SM spelled this the same as ``identity``.)
    public static var undefined: Transition { IOTransition(isDefined: false) }

    /// Handled, with no change and no effect.
    public static var identity: Transition { IOTransition() }

    /// Moves to `state` without starting IO. An IO effect in flight keeps running unless
    /// `cancellingIOEffect` is `true`.
    public static func nextState(_ state: State, cancellingIOEffect: Bool = false) -> Transition {
        IOTransition(state: state, cancelsIOEffect: cancellingIOEffect)
    }

    /// Starts `effect` without changing the state, replacing any IO effect in flight.
    public static func run(_ effect: IOEffect) -> Transition { IOTransition(effect: effect) }

    /// Moves to `state` and starts `effect`, replacing any IO effect in flight.
    public static func transition(_ state: State, effect: IOEffect) -> Transition {
        IOTransition(state: state, effect: effect)
    }
}

/// What an ``IOStateMachine`` reducer returns: an optional next state and an optional IO effect.
///
/// TCA-SM used the tuple `(State?, IOEffect?)`; Grove uses a struct so that ``IOStateMachine/undefined``
/// (reported as unhandled) differs from ``IOStateMachine/identity`` (handled, nothing to do).
public struct IOTransition<State: Sendable, IOEffect: Sendable>: Sendable {
    /// The next state, or `nil` to keep the current one.
    public var state: State?
    /// The IO effect to start, or `nil` for none.
    public var effect: IOEffect?
    /// Whether the IO effect in flight is cancelled even though no new one starts.
    public var cancelsIOEffect: Bool
    /// `false` for ``IOStateMachine/undefined``.
    public var isDefined: Bool

    /// A transition; the helpers on ``IOStateMachine`` read better.
    public init(state: State? = nil, effect: IOEffect? = nil, cancelsIOEffect: Bool = false, isDefined: Bool = true) {
        self.state = state
        self.effect = effect
        self.cancelsIOEffect = cancelsIOEffect
        self.isDefined = isDefined
    }
}

extension IOTransition: Equatable where State: Equatable, IOEffect: Equatable {}

/// Runs an ``IOStateMachine`` as a Grove ``Machine``; the feature value is the environment:
/// `MachineHost(IOMachine<MyFeature>.self, env: MyFeature(api: .live))`.
public enum IOMachine<F: IOStateMachine>: Machine {
    public typealias State = F.State
    public typealias Env = F

    /// What the machine accepts: inputs from outside and results of its own IO.
    public enum Event: Sendable {
        /// An input for ``IOStateMachine/reduceInput(_:_:)``.
        case input(F.Input)
        /// An IO result for ``IOStateMachine/reduceIOResult(_:_:)``.
        case ioResult(F.IOResult)
    }

    /// The id of the IO effect in flight. There is only ever one.
    public static var ioEffectID: EffectID { "io-effect" }

    public static var initialState: F.State { F.initialState }

    public static func update(_ state: inout F.State, event: Event) -> MachineEffect<IOMachine> {
        let transition = switch event {
        case .input(let input): F.reduceInput(state, input)
        case .ioResult(let result): F.reduceIOResult(state, result)
        }
        guard transition.isDefined else { return .unhandled }
        if let next = transition.state { state = next }
        if let effect = transition.effect {
            return .task(id: ioEffectID) { feature in await feature.runIOEffect(effect).map(Event.ioResult) }
        }
        return transition.cancelsIOEffect ? .cancel(ioEffectID) : .none
    }

    public static func isTerminal(_ state: F.State) -> Bool { F.isTerminal(state) }
}

extension IOMachine.Event: Equatable where F.Input: Equatable, F.IOResult: Equatable {}
extension IOMachine.Event: Hashable where F.Input: Hashable, F.IOResult: Hashable {}
extension IOMachine.Event: Codable where F.Input: Codable, F.IOResult: Codable {}
