public import GroveTea

/// An action enum whose cases a ``Scope`` can reach by key path, `\.child`, as TCA's
/// `@CasePathable` enums are. Without TCA's macro, the enum lists its cases itself:
///
/// ```swift
/// enum Action: CasePathable {
///     case input(Input)
///     case child(Child.Action)
///
///     struct AllCasePaths {
///         var child: CasePath<Action, Child.Action> { CasePath(Action.child) { if case .child(let a) = $0 { a } else { nil } } }
///     }
///     static var allCasePaths: AllCasePaths { AllCasePaths() }
/// }
/// ```
public protocol CasePathable {
    /// A type with one ``CasePath`` property per case a scope reaches.
    associatedtype AllCasePaths
    /// The case paths.
    static var allCasePaths: AllCasePaths { get }
}

/// One case of an enum `Root` carrying a `Value`: how to make the case of a value, and how to
/// read the value out of the case (`nil` for another case).
public struct CasePath<Root, Value>: Sendable {
    let embed: @Sendable (Value) -> Root
    let extract: @Sendable (Root) -> Value?

    /// A case path from the case's constructor and a pattern match.
    /// - Parameters:
    ///   - embed: Makes the case: `Action.child`.
    ///   - extract: The value when `root` is the case, else `nil`.
    public init(_ embed: @escaping @Sendable (Value) -> Root, extract: @escaping @Sendable (Root) -> Value?) {
        self.embed = embed
        self.extract = extract
    }
}

/// Runs a child reducer on part of the parent's state, for the actions of one case of the
/// parent's action, as TCA's `Scope`:
///
/// ```swift
/// Scope(state: \.map, action: \.mapAction) { MapFeature() }
/// ```
/// Other actions pass by. The child's effects come back as the parent's case. The child's
/// reducer is made once per action, by `child`, so it sees the dependencies of the moment.
public struct Scope<ParentState: Sendable, ParentAction: Sendable, Child: Reducer>: Reducer {
    let state: WritableKeyPath<ParentState, Child.State>
    let action: CasePath<ParentAction, Child.Action>
    let child: () -> Child

    /// A child reached through a case of the parent's action, by key path: `action: \.child`.
    /// - Parameters:
    ///   - state: The child's state in the parent's.
    ///   - action: The case carrying the child's actions, in the action's ``CasePathable/AllCasePaths``.
    ///   - child: The child reducer.
    public init<ChildState, ChildAction>(
        state: WritableKeyPath<ParentState, ChildState>,
        action: KeyPath<ParentAction.AllCasePaths, CasePath<ParentAction, ChildAction>>,
        @ReducerBuilder<ChildState, ChildAction> child: @escaping () -> Child
    ) where ParentAction: CasePathable, ChildState == Child.State, ChildAction == Child.Action {
        self.init(state: state, action: ParentAction.allCasePaths[keyPath: action], child: child)
    }

    /// A child reached through a ``CasePath`` value.
    /// - Parameters:
    ///   - state: The child's state in the parent's.
    ///   - action: The case carrying the child's actions.
    ///   - child: The child reducer.
    public init<ChildState, ChildAction>(
        state: WritableKeyPath<ParentState, ChildState>,
        action: CasePath<ParentAction, ChildAction>,
        @ReducerBuilder<ChildState, ChildAction> child: @escaping () -> Child
    ) where ChildState == Child.State, ChildAction == Child.Action {
        self.state = state
        self.action = action
        self.child = child
    }

    /// Runs the child when `action` is its case; otherwise does nothing.
    public func reduce(into state: inout ParentState, action: ParentAction) -> Effect<ParentAction> {
        guard let childAction = self.action.extract(action) else { return .none }
        return child().reduce(into: &state[keyPath: self.state], action: childAction).map(self.action.embed)
    }
}
