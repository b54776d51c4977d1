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
/// has at most one IO effect in flight, and it belongs to the state that started it
/// ("cancellation implicit in state transitions"): a transition to a new state cancels it, and
/// one that starts a new effect replaces it. Its result is then never delivered.
public protocol IOStateMachine: Sendable {
    /// Everything the feature remembers.
    associatedtype State: Sendable
    /// What users and other parts of the app send.
    associatedtype Input: Sendable
    /// A description of IO to perform, interpreted by ``runIOEffect(_:)``.
    associatedtype IOEffect: Sendable
    /// What IO reports back. Errors are results too: ``runIOEffect(_:)`` cannot throw.
    associatedtype IOResult: Sendable

    /// What a reducer returns, TCA-SM's tuple: the next state (`nil` keeps the current one) and
    /// the IO effect to start (`nil` for none). Tests read `result.0` and `result.1`.
    typealias Transition = (State?, IOEffect?)

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

    /// No transition for this (state, input) pair: TCA-SM's `(nil, nil)`, the same value as
    /// ``identity``. The state stays and IO in flight keeps running.
    public static var undefined: Transition { (nil, nil) }

    /// Handled, with no change and no effect: `(nil, nil)`.
    public static var identity: Transition { (nil, nil) }

    /// Moves to `state` without starting IO; the IO effect in flight, if any, is cancelled with
    /// the state that started it.
    public static func nextState(_ state: State) -> Transition { (state, nil) }

    /// Starts `effect` without changing the state, replacing any IO effect in flight.
    public static func run(_ effect: IOEffect) -> Transition { (nil, effect) }

    /// Moves to `state` and starts `effect`, replacing any IO effect in flight.
    public static func transition(_ state: State, effect: IOEffect) -> Transition { (state, effect) }

    /// TCA-SM's escape hatch: runs `action` inside the reducer, then changes nothing. It is the
    /// one impure helper; Grove runs reducers again when it checks or replays them (`fsm-check`
    /// runs every pair twice), so `action` must tolerate running more than once.
    ///
    /// Call it `Self.unsafe { … }` or `unsafe() { … }`: since Swift 6.2 a bare `unsafe { … }` is
    /// the memory-safety keyword applied to a closure, whatever function of this name exists.
    public static func unsafe(_ action: @escaping () -> Void) -> Transition {
        action()
        return (nil, nil)
    }

    /// `value` with the property at `keyPath` set to `newValue`:
    /// `nextState(withVar(state, \.showAlert, true))`.
    public static func withVar<Value, Property>(
        _ value: Value, _ keyPath: WritableKeyPath<Value, Property>, _ newValue: Property
    ) -> Value {
        var copy = value
        copy[keyPath: keyPath] = newValue
        return copy
    }
}

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
        let (next, effect) = switch event {
        case .input(let input): F.reduceInput(state, input)
        case .ioResult(let result): F.reduceIOResult(state, result)
        }
        if let next { state = next }
        if let effect {
            return .task(id: ioEffectID) { feature in await feature.runIOEffect(effect).map(Event.ioResult) }
        }
        // The IO in flight belongs to the state that started it. A result means it has finished
        // (a cancelled effect never delivers one), so only an input can leave IO behind.
        guard next != nil, case .input = event else { return .none }
        return .cancel(ioEffectID)
    }

    public static func isTerminal(_ state: F.State) -> Bool { F.isTerminal(state) }
}

extension IOMachine.Event: Redacting {
    /// Secrets of the feature's inputs and IO results, when their types adopt ``Redacting``.
    public static var holdsSecrets: Bool { Redaction.applies(to: F.Input.self) || Redaction.applies(to: F.IOResult.self) }

    /// The input or the result, redacted.
    public var redacted: Self {
        switch self {
        case .input(let input): .input(Redaction.redact(input))
        case .ioResult(let result): .ioResult(Redaction.redact(result))
        }
    }
}

extension IOMachine.Event: Equatable where F.Input: Equatable, F.IOResult: Equatable {}
extension IOMachine.Event: Hashable where F.Input: Hashable, F.IOResult: Hashable {}
extension IOMachine.Event: Codable where F.Input: Codable, F.IOResult: Codable {}
