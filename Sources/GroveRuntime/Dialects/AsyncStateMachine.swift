public import Grove
public import Logging

/// A ``StateMachine`` running in a ``MachineHost``, seen as an async sequence of its states.
///
/// Iterating yields the state at the time iteration begins, then every state the machine moves
/// to. The machine starts when it is first iterated (or on ``start()``); events sent before wait,
/// in order, so the first iteration always begins with the initial state.
/// ```swift
/// let machine = AsyncStateMachine(makeStateMachine(load: load))
/// Task { for await state in machine { print(state) } }
/// try machine.send(.loadingWasRequested(id: "3"))
/// ```
/// Copies share one running machine. The sequence finishes when the machine is stopped.
///
/// A machine whose transitions are `async` runs each in its turn: events sent while one awaits
/// wait behind it, in order, and none of them is dropped or reordered; stopping the machine
/// cancels the transition that awaits and drops the events behind it.
public struct AsyncStateMachine<State: Sendable, Event: Sendable>: AsyncSequence, Sendable {
    public typealias Element = State
    public typealias Failure = Never

    /// The host running the machine. Not public: its machine type carries the transitions in its
    /// state and has no static initial state, so nothing outside this type may create one.
    package let host: MachineHost<HostedStateMachine<State, Event>>

    /// The state the machine starts in, the first state every iteration sees.
    public let initialState: State

    /// Creates a host for `stateMachine`, not yet started.
    /// - Parameters:
    ///   - stateMachine: The machine to run.
    ///   - clock: The host's clock; only relevant to tests.
    ///   - options: Address, mailbox capacity, diagnostics.
    ///   - logger: Defaults to a logger labelled `grove.host`.
    public init(
        _ stateMachine: StateMachine<State, Event>,
        clock: any HostClock = WallClock(),
        options: Options = Options(),
        logger: Logger? = nil
    ) {
        host = MachineHost(initialState: .init(stateMachine), clock: clock, options: options.hostOptions, logger: logger)
        initialState = stateMachine.initial
    }

    /// Queues `event` for the machine.
    /// - Throws: `HostError` when the mailbox is full or the machine was stopped.
    public func send(_ event: Event) throws(HostError) { try host.send(.event(event)) }

    /// Begins processing events without iterating. Idempotent.
    public func start() { host.start() }

    /// Stops the machine: cancels its side effects and finishes every iteration.
    public func stop() async { await host.stop() }

    /// The machine's current state.
    public var state: State {
        get async { await host.state.current }
    }

    public func makeAsyncIterator() -> Iterator { Iterator(host: host) }

    /// Iterates the states of an ``AsyncStateMachine``.
    public struct Iterator: AsyncIteratorProtocol {
        public typealias Element = State
        public typealias Failure = Never

        let host: MachineHost<HostedStateMachine<State, Event>>
        var states: AsyncStream<HostedStateMachine<State, Event>.State>.Iterator?
        /// The transitions counted in the state last yielded: an event that only waits behind an
        /// `async` transition commits the hosted state without a new state of the machine's.
        var yielded: Int?

        public mutating func next() async -> State? {
            if states == nil {
                // Subscribe before starting, so the first element is the state before any event.
                states = await host.states().makeAsyncIterator()
                host.start()
            }
            while let hosted = await states?.next() {
                guard hosted.transitions != yielded else { continue }
                yielded = hosted.transitions
                return hosted.current
            }
            return nil
        }
    }
}
