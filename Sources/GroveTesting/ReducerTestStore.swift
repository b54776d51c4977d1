public import Grove
public import GroveRuntime
public import Testing

/// ``TestStore`` for a SwiftTea reducer given as a value (a free function or a closure), with
/// the arguments a `Store` takes:
///
/// ```swift
/// let store = ReducerTestStore(initialState: AppState(), reduce: appReducer, environment: .mock)
/// await store.send(.loadData)
/// await store.receive(.dataLoaded("mock data")) { $0.data = "mock data" }
/// await store.finish()
/// ```
///
/// The same exhaustive checks as ``TestStore``; assertions see the user's state. It is a type of
/// its own because a reducer's machine has no static initial state, so it cannot be named as
/// `TestStore<M>`'s machine outside this package without a type that compiles and then traps.
public final class ReducerTestStore<State: Equatable & Sendable, Action: Equatable & Sendable> {
    private let store: TestStore<TeaStoreMachine<State, Action>>

    /// Where the store reports a failed expectation: a message and the line it belongs to.
    public typealias IssueReporter = @Sendable (_ message: String, _ sourceLocation: SourceLocation) -> Void

    /// The store's clock, which `.after` timers use: advance it with ``advance(by:sourceLocation:)``.
    public var clock: TestClock { store.clock }
    /// The last asserted state.
    public var state: State { store.state.current }
    /// How long `receive` and `finish` wait for effects before failing.
    public var timeout: Duration {
        get { store.timeout }
        set { store.timeout = newValue }
    }

    /// A store for a reducer with an environment.
    /// - Parameters:
    ///   - initialState: The state the reducer starts from.
    ///   - reduce: The reducer; `environment` is its third argument for every action.
    ///   - environment: The dependencies its effects capture; use test doubles.
    ///   - io: Handlers for `.io` effects.
    ///   - clock: The clock `.after` timers use.
    ///   - reportIssue: Where failures go; by default, issues of the running test.
    public convenience init<Environment: Sendable>(
        initialState: State,
        reduce: @escaping @Sendable (State, Action, Environment) -> (State, TeaEffect<Action, Void>),
        environment: Environment,
        io: IOHandlers = IOHandlers(),
        clock: TestClock = TestClock(),
        reportIssue: IssueReporter? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        self.init(initialState: initialState, reduce: { state, action in reduce(state, action, environment) },
                  io: io, clock: clock, reportIssue: reportIssue, sourceLocation: sourceLocation)
    }

    /// A store for a reducer without dependencies, as `Store(initialState:reduce:)` takes it.
    /// - Parameters:
    ///   - initialState: The state the reducer starts from.
    ///   - reduce: The reducer, a free function or a closure.
    ///   - io: Handlers for `.io` effects.
    ///   - clock: The clock `.after` timers use.
    ///   - reportIssue: Where failures go; by default, issues of the running test.
    public init(
        initialState: State,
        reduce: @escaping @Sendable (State, Action) -> (State, TeaEffect<Action, Void>),
        io: IOHandlers = IOHandlers(),
        clock: TestClock = TestClock(),
        reportIssue: IssueReporter? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        typealias Machine = TeaStoreMachine<State, Action>
        store = TestStore(Machine.self, initialState: Machine.State(current: initialState, reduce: reduce), env: (), io: io,
                          clock: clock, reportIssue: reportIssue ?? TestStore<Machine>.recordIssue, sourceLocation: sourceLocation)
        store.dumpedState = { $0.current }
    }

    /// Sends `action` and asserts the state it commits.
    /// - Parameter update: Turns the previous state into the expected one; omit when the state
    ///   stays the same.
    public func send(_ action: Action, assert update: ((inout State) throws -> Void)? = nil,
                     sourceLocation: SourceLocation = #_sourceLocation) async {
        await store.send(action, assert: update.map { update in { try update(&$0.current) } }, sourceLocation: sourceLocation)
    }

    /// Sends `action` and asserts that the reducer does not handle it (returns `.unhandled`).
    public func sendUnhandled(_ action: Action, sourceLocation: SourceLocation = #_sourceLocation) async {
        await store.sendUnhandled(action, sourceLocation: sourceLocation)
    }

    /// Waits for the next action an effect sent and asserts it and the state it committed.
    public func receive(_ action: Action, assert update: ((inout State) throws -> Void)? = nil,
                        sourceLocation: SourceLocation = #_sourceLocation) async {
        await store.receive(action, assert: update.map { update in { try update(&$0.current) } }, sourceLocation: sourceLocation)
    }

    /// Waits for the next action an effect sent and asserts that it was unhandled.
    public func receiveUnhandled(_ action: Action, sourceLocation: SourceLocation = #_sourceLocation) async {
        await store.receiveUnhandled(action, sourceLocation: sourceLocation)
    }

    /// Moves the store's clock forward, firing due timers and processing what they cause.
    public func advance(by duration: Duration, sourceLocation: SourceLocation = #_sourceLocation) async {
        await store.advance(by: duration, sourceLocation: sourceLocation)
    }

    /// Checks the test left nothing behind (``TestStore/finish(sourceLocation:)``) and stops
    /// the reducer's host.
    public func finish(sourceLocation: SourceLocation = #_sourceLocation) async {
        await store.finish(sourceLocation: sourceLocation)
    }
}
