public import Grove
public import GroveTea

/// TCA-SM's `StateMachine`: an ``IOStateMachine`` (pure static `reduceInput` and
/// `reduceIOResult`, `runIOEffect` on the instance) that is also a ``Reducer``, so that it
/// composes with other reducers in a `body` and ``apply(_:to:)`` runs its transitions.
///
/// ```swift
/// struct Feature: StateMachine {
///     // State, Input, IOEffect, IOResult, initialState, reduceInput, reduceIOResult, runIOEffect
///     var body: some Reducer<State, Action> {
///         Reduce { state, action in
///             let transition = Self.reduce(state, action)
///             return apply(transition, to: &state)
///         }
///     }
/// }
/// ```
/// Without a `body`, that reducer is the feature's: "Standard Body Implementation". `Action`
/// defaults to ``IOMachine``'s event (`.input`, `.ioResult`); a feature with actions of its own
/// declares a ``MappableAction`` enum. The name is the seed's; Grove's own `StateMachine` is
/// StateMachinePackage's value. A file that imports both modules names this one with
/// `import protocol GroveTCA.StateMachine` (the scoped import wins over the module import).
public protocol StateMachine: Reducer, IOStateMachine
where Action: MappableAction, Action.Input == Input, Action.IOResult == IOResult {
    /// The feature's actions: its inputs and IO results, and any others it leaves to other reducers.
    associatedtype Action = IOMachine<Self>.Event
}

extension StateMachine {
    /// The id the feature's IO effect runs under: one per feature type, so that a parent and a
    /// child feature composed in one `body` each keep one effect in flight of their own.
    public static var ioEffectID: EffectID { EffectID("io-effect:\(Self.self)") }

    /// Applies `transition` to `state` and returns its IO effect, as ``IOMachine`` runs it: a new
    /// state replaces the state, an IO effect runs ``IOStateMachine/runIOEffect(_:)`` on this
    /// instance and sends its result back as `.ioResult`. IO belongs to the state that started
    /// it: a new effect replaces the one in flight, a new state without one cancels it, and
    /// `(nil, nil)` leaves it running.
    /// - Parameters:
    ///   - transition: What `reduceInput`, `reduceIOResult` or `Self.reduce` returned.
    ///   - state: The state to change.
    /// - Returns: The effect to return from a ``Reduce``.
    public func apply(_ transition: Transition, to state: inout State) -> Effect<Action> {
        let (next, ioEffect) = transition
        if let next { state = next }
        if let ioEffect {
            return .cancellable({ [self] in await runIOEffect(ioEffect).map(Action.ioResult) }, Self.ioEffectID)
        }
        return next == nil ? .none : .cancel(Self.ioEffectID)
    }
}

extension StateMachine where Body == Never {
    /// A feature without a `body`: the seed's "Standard Body Implementation",
    /// `apply(Self.reduce(state, action), to: &state)`.
    public func reduce(into state: inout State, action: Action) -> Effect<Action> {
        apply(Self.reduce(state, action), to: &state)
    }
}
