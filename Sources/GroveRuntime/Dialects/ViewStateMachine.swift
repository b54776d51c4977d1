public import Grove
public import Observation

/// An ``AsyncStateMachine`` for a UI: its current ``state`` is observable (the Observation
/// module's `@Observable`, which SwiftUI and any other observer track), and ``send(_:)`` does not
/// throw, so a button's action can call it directly.
///
/// ```swift
/// struct MyView: View {
///     let stateMachine: ViewStateMachine<State, Event>
///     var body: some View {
///         Text("\(stateMachine.state)")
///             .task { await stateMachine.start() }
///         Button("Load") { stateMachine.send(.loadingWasRequested(id: "3")) }
///     }
/// }
/// ```
/// StateMachinePackage's `ViewStateMachine` was an `ObservableObject`; this one is `@Observable`,
/// which needs no Combine and exists on Linux too. It lives on the main actor, as a view's state
/// does.
@MainActor
@Observable
public final class ViewStateMachine<State: Sendable, Event: Sendable> {
    /// The machine's current state, updated while ``start()`` runs.
    public private(set) var state: State
    /// Why the last ``send(_:)`` was refused (the machine was stopped, or its mailbox was full);
    /// `nil` while every event was accepted.
    public private(set) var sendError: HostError?

    @ObservationIgnored private let machine: AsyncStateMachine<State, Event>

    /// Wraps `stateMachine` in a new ``AsyncStateMachine``; nothing runs until ``start()``.
    /// - Parameter stateMachine: The machine to run.
    public convenience init(stateMachine: StateMachine<State, Event>) {
        self.init(asyncStateMachine: AsyncStateMachine(stateMachine))
    }

    /// Observes an ``AsyncStateMachine`` created elsewhere (with a test clock, options, a logger).
    /// - Parameter asyncStateMachine: The machine to observe; ``start()`` starts it.
    public init(asyncStateMachine: AsyncStateMachine<State, Event>) {
        machine = asyncStateMachine
        state = asyncStateMachine.initialState
    }

    /// Queues `event` for the machine. A refusal is kept in ``sendError``.
    public func send(_ event: Event) {
        do {
            try machine.send(event)
        } catch {
            sendError = error
        }
    }

    /// Starts the machine and follows its states until it is stopped, or the calling task is
    /// cancelled (a view's `.task` is cancelled when the view goes away).
    public func start() async {
        for await next in machine {
            state = next
        }
    }

    /// Stops the machine; ``start()`` then returns.
    public func stop() async { await machine.stop() }
}
