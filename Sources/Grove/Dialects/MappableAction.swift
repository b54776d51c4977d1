/// One of two values: what ``MappableAction/map(_:)`` returns for an action a state machine handles.
public enum OneOfTwo<Left, Right> {
    /// The first kind, an input.
    case left(Left)
    /// The second kind, an IO result.
    case right(Right)
}

extension OneOfTwo: Sendable where Left: Sendable, Right: Sendable {}
extension OneOfTwo: Equatable where Left: Equatable, Right: Equatable {}

/// TCA-SM's action protocol: an action that may carry an ``IOStateMachine`` input or IO result,
/// beside actions of its own that the state machine does not handle.
///
/// ```swift
/// enum Action: MappableAction {
///     case input(Input)
///     case ioResult(IOResult)
///     case childAction(ChildFeature.Action)
///
///     static func map(_ action: Self) -> OneOfTwo<Input, IOResult>? {
///         switch action {
///         case .input(let input): .left(input)
///         case .ioResult(let result): .right(result)
///         case .childAction: nil
///         }
///     }
/// }
/// ```
/// ``IOStateMachine/reduce(_:_:)`` routes such an action to the right reducer. ``IOMachine``'s own
/// `Event` is one.
public protocol MappableAction {
    /// The inputs the state machine accepts.
    associatedtype Input
    /// The IO results the state machine accepts.
    associatedtype IOResult

    /// The action carrying `input`.
    static func input(_: Input) -> Self
    /// The action carrying `ioResult`.
    static func ioResult(_: IOResult) -> Self
    /// The input or IO result `action` carries; `nil` for an action the state machine leaves to
    /// others.
    static func map(_ action: Self) -> OneOfTwo<Input, IOResult>?
}

extension IOStateMachine {
    /// The transition for an action: ``reduceInput(_:_:)`` for an input,
    /// ``reduceIOResult(_:_:)`` for an IO result, ``identity`` for an action that carries
    /// neither.
    public static func reduce<A: MappableAction>(_ state: State, _ action: A) -> Transition
    where A.Input == Input, A.IOResult == IOResult {
        switch A.map(action) {
        case .left(let input): reduceInput(state, input)
        case .right(let result): reduceIOResult(state, result)
        case nil: identity
        }
    }
}

extension IOMachine.Event: MappableAction {
    public static func map(_ action: Self) -> OneOfTwo<F.Input, F.IOResult>? {
        switch action {
        case .input(let input): .left(input)
        case .ioResult(let result): .right(result)
        }
    }
}
