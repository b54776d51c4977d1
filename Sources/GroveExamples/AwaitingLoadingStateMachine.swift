public import Grove

/// Seed 003's `LoadingStateMachine` with the load awaited in the transition itself, in the
/// seed's own shape, `StateMachine(initial:) { state, event async in … }`, hosted by type as an
/// ``AwaitingStateMachine``, so that it runs on a worker and in `TestStore`.
///
/// A request is answered at once with the state before the load and the request in transition;
/// the load's result commits when it returns (`loaded` or `failed`). Requests that arrive
/// meanwhile wait, and each then runs from the state the one before committed: a request after
/// a `loaded` is unhandled (`sameState()`), as in ``LoadingStateMachine``.
/// ```swift
/// worker.register(AwaitingStateMachine<AwaitingLoadingStateMachine>.self, as: "AwaitingLoadingStateMachine")
/// ```
public enum AwaitingLoadingStateMachine: AwaitingStateMachineProgram {
    public typealias State = LoadingStateMachine.State
    public typealias Event = LoadingStateMachine.Event

    /// The machine with ``LoadingStateMachine/Load/demo``.
    public static var stateMachine: StateMachine<State, Event> { makeStateMachine(load: .demo) }

    /// The machine, loading with `load` inside its transition.
    public static func makeStateMachine(load: LoadingStateMachine.Load) -> StateMachine<State, Event> {
        StateMachine(initial: .idle) { state, event async in
            switch (state, event) {
            case (.idle, .loadingWasRequested(let id)), (.failed, .loadingWasRequested(let id)):
                do {
                    return .newState(.loaded(value: try await load.loadFunction(id)))
                } catch {
                    return .newState(.failed(message: "\(error)"))
                }
            case (.loading, .loadingHasSucceeded(let value)):
                return .newState(.loaded(value: value))
            case (.loading, .loadingHasFailed(let message)):
                return .newState(.failed(message: message))
            default:
                return .sameState()
            }
        }
    }
}
