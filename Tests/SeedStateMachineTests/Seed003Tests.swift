import Grove
import GroveRuntime
import Observation
import Testing

/// Seed 003's example, as written (Seed003/LoadingExample.swift), doing what the document says:
/// the view's state follows the machine's states as the view sends events.
@Suite("Seed 003: StateMachinePackage", .timeLimit(.minutes(2)))
@MainActor
struct Seed003Tests {
    @Test func theTransitionsAreTheSeeds() async {
        let machine = makeStateMachine(load: Load(apiService: ApiService()))
        guard case .idle = machine.initial else { Issue.record("starts \(machine.initial)"); return }
        guard case .newState(.loading, let output?) = machine.reduce(.idle, .loadingwasRequested(id: "3")) else {
            Issue.record("a request from idle must start loading with a side effect")
            return
        }
        guard case .loadingHasSucceeded(30)? = await output() else {
            Issue.record("the side effect loads through the api service")
            return
        }
        guard case .newState(.loaded(value: 30), nil) = machine.reduce(.loading, .loadingHasSucceeded(value: 30)) else {
            Issue.record("success loads the value")
            return
        }
        guard case .sameState(nil) = machine.reduce(.loaded(value: 30), .loadingwasRequested(id: "4")) else {
            Issue.record("anything else is the same state")
            return
        }
    }

    @Test func theViewStateFollowsTheMachine() async throws {
        let view = viewStateMachine
        let starting = Task { await view.start() }
        guard case .idle = view.state else { Issue.record("starts \(view.state)"); return }

        try await changes(of: view) { view.send(.loadingwasRequested(id: "3")) }
        try await waitFor(view) { if case .loaded(30) = $0 { true } else { false } }
        #expect(view.sendError == nil)

        await view.stop()
        await starting.value
        view.send(.loadingwasRequested(id: "3"))
        #expect(view.sendError?.code == .stopped, "a stopped machine refuses events, and the view says so")
    }

    @Test func aFailedLoadIsShown() async throws {
        let view = viewStateMachine
        let starting = Task { await view.start() }
        view.send(.loadingwasRequested(id: "three"))
        try await waitFor(view) {
            if case .failed(let error) = $0 { (error as? ApiService.NotFound) == ApiService.NotFound(id: "three") } else { false }
        }
        await view.stop()
        await starting.value
    }

    /// Runs `change` and waits, with a deadline, until observation reports a change of `state`.
    private func changes(of view: ViewStateMachine<State, Event>, _ change: () -> Void) async throws {
        let observed = AsyncStream<Void>.makeStream()
        withObservationTracking { _ = view.state } onChange: { observed.continuation.yield() }
        change()
        let seen = await withTaskGroup(of: Bool.self) { group in
            group.addTask { await observed.stream.first { _ in true } != nil }
            group.addTask { try? await Task.sleep(for: .seconds(45)); return false }
            let first = await group.next() ?? false
            group.cancelAll()
            observed.continuation.finish()
            return first
        }
        #expect(seen, "observers of `state` must be told when it changes")
    }

    /// Waits until the view's state satisfies `condition`, for at most 45 seconds: the seed's
    /// transitions await, and in a full parallel run (900 tests on a 2-thread pool, under a
    /// build's load) a transition waited 25 s for a pool thread (as AsyncTransitionsTests saw).
    private func waitFor(_ view: ViewStateMachine<State, Event>, _ condition: (State) -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(45)
        while !condition(view.state) {
            guard ContinuousClock.now < deadline else {
                Issue.record("the state is still \(view.state)")
                return
            }
            await Task.yield()
            try await Task.sleep(for: .milliseconds(5))
        }
    }
}
