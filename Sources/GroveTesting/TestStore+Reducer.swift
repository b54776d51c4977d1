package import Grove
package import GroveRuntime
package import Testing

extension TestStore {
    /// A store for a SwiftTea reducer with an environment, with the arguments a `Store` takes:
    /// `TestStore(initialState: AppState(), reduce: appReducer, environment: .mock)`.
    ///
    /// Assertions see the user's state through its members (`$0.isLoading = true`), or whole as
    /// `$0.current`.
    /// - Parameters:
    ///   - initialState: The state the reducer starts from.
    ///   - reduce: The reducer; `environment` is its third argument for every action.
    ///   - environment: The dependencies its effects capture; use test doubles.
    ///   - io: Handlers for `.io` effects.
    ///   - clock: The clock `.after` timers use.
    ///   - reportIssue: Where failures go.
    package convenience init<S, A, Environment: Sendable>(
        initialState: S,
        reduce: @escaping @Sendable (S, A, Environment) -> (S, TeaEffect<A, Void>),
        environment: Environment,
        io: IOHandlers = IOHandlers(),
        clock: TestClock = TestClock(),
        reportIssue: @escaping IssueReporter = TestStore.recordIssue,
        sourceLocation: SourceLocation = #_sourceLocation
    ) where M == TeaStoreMachine<S, A> {
        self.init(initialState: initialState, reduce: { state, action in reduce(state, action, environment) },
                  io: io, clock: clock, reportIssue: reportIssue, sourceLocation: sourceLocation)
    }

    /// A store for a SwiftTea reducer without dependencies, as `Store(initialState:reduce:)`
    /// takes it.
    /// - Parameters:
    ///   - initialState: The state the reducer starts from.
    ///   - reduce: The reducer, a free function or a closure.
    ///   - io: Handlers for `.io` effects.
    ///   - clock: The clock `.after` timers use.
    ///   - reportIssue: Where failures go.
    package convenience init<S, A>(
        initialState: S,
        reduce: @escaping @Sendable (S, A) -> (S, TeaEffect<A, Void>),
        io: IOHandlers = IOHandlers(),
        clock: TestClock = TestClock(),
        reportIssue: @escaping IssueReporter = TestStore.recordIssue,
        sourceLocation: SourceLocation = #_sourceLocation
    ) where M == TeaStoreMachine<S, A> {
        self.init(M.self, initialState: M.State(current: initialState, reduce: reduce), env: (), io: io, clock: clock,
                  reportIssue: reportIssue, sourceLocation: sourceLocation)
    }
}
