import Grove
import GroveExamples
import GroveRuntime
import Testing

@Suite("LoadingStateMachine (StateMachinePackage dialect)", .timeLimit(.minutes(2)))
struct LoadingStateMachineTests {
    /// A load the test answers by hand.
    struct LoadCall: IORequest {
        typealias Response = Int
        var id: String
    }

    private func load(_ calls: PendingCalls<LoadCall>) -> LoadingStateMachine.Load {
        LoadingStateMachine.Load { id in try await calls.handle(LoadCall(id: id)) }
    }

    /// Iterates `machine` until a state satisfies `last`, returning every state seen; fires
    /// `iterating` once the first state arrived.
    private func states(
        of machine: AsyncStateMachine<LoadingStateMachine.State, LoadingStateMachine.Event>,
        iterating: ExampleSignal = ExampleSignal(),
        until last: @escaping @Sendable (LoadingStateMachine.State) -> Bool
    ) -> Task<[LoadingStateMachine.State]?, Never> {
        Task {
            await withinDeadline {
                var seen: [LoadingStateMachine.State] = []
                for await state in machine {
                    seen.append(state)
                    iterating.fire()
                    if last(state) { break }
                }
                return seen
            }
        }
    }

    @Test("the transitions are the seed's, and unrelated events keep the same state")
    func pureTransitions() {
        let machine = LoadingStateMachine.makeStateMachine(load: LoadingStateMachine.Load { _ in 1 })
        guard case .newState(.loading, let output?) = machine.reduce(.idle, .loadingWasRequested(id: "3")) else {
            Issue.record("a request from idle should start loading with a side effect")
            return
        }
        #expect(output.id == "load")
        guard case .sameState(nil) = machine.reduce(.loaded(value: 1), .loadingWasRequested(id: "3")) else {
            Issue.record("a request once loaded should keep the state")
            return
        }
    }

    @Test("iterating yields the initial state, loading, then the loaded value")
    func loadsAsSequence() async throws {
        let calls = PendingCalls<LoadCall>()
        let machine = LoadingStateMachine.asyncStateMachine(load: load(calls))
        let seen = states(of: machine) { if case .loaded = $0 { true } else { false } }
        try machine.send(.loadingWasRequested(id: "3"))
        let call = try #require(await calls.next())
        #expect(call.request.id == "3")
        await call.succeed(42)
        #expect(await seen.value == [.idle, .loading, .loaded(value: 42)])
        #expect(await machine.state == .loaded(value: 42))
        await machine.stop()
    }

    @Test("a failed load becomes the failed state, and a new request retries")
    func failureThenRetry() async throws {
        let calls = PendingCalls<LoadCall>()
        let machine = LoadingStateMachine.asyncStateMachine(load: load(calls))
        let seen = states(of: machine) { if case .loaded = $0 { true } else { false } }
        try machine.send(.loadingWasRequested(id: "7"))
        try await #require(await calls.next()).fail(IOFailure(.handlerFailed, "offline"))
        let failed = try #require(await awaitState(of: machine.host) { if case .failed = $0.current { true } else { false } })
        #expect(failed.current == .failed(message: "handler-failed: offline"))

        try machine.send(.loadingWasRequested(id: "7"))
        try await #require(await calls.next()).succeed(7)
        #expect(await seen.value == [.idle, .loading, .failed(message: "handler-failed: offline"), .loading,
                                     .loaded(value: 7)])
        await machine.stop()
    }

    @Test("events the state ignores are reported as unhandled and not repeated as states")
    func sameStateIsUnhandled() async throws {
        let unhandled = ExampleLog<LoadingStateMachine.Event>()
        let calls = PendingCalls<LoadCall>()
        let machine = AsyncStateMachine(
            LoadingStateMachine.makeStateMachine(load: load(calls)),
            options: .init(diagnostics: { diagnostic in
                if case .unhandled(_, let event) = diagnostic { unhandled.append(event) }
            }))
        let seen = states(of: machine) { $0 == .loading }
        try machine.send(.loadingHasSucceeded(value: 1))
        try machine.send(.loadingWasRequested(id: "1"))
        #expect(await seen.value == [.idle, .loading])
        #expect(unhandled.values == [.loadingHasSucceeded(value: 1)])
        await machine.stop()
    }

    @Test("stopping the machine finishes the iteration")
    func stopFinishes() async throws {
        let machine = LoadingStateMachine.asyncStateMachine(load: LoadingStateMachine.Load { _ in 1 })
        let iterating = ExampleSignal()
        let seen = states(of: machine, iterating: iterating) { _ in false }
        // The iteration is under way (it has the initial state) before the machine stops.
        #expect(await iterating.wait())
        machine.start()
        await machine.stop()
        #expect(await seen.value == [.idle])
        #expect(throws: HostError.self) { try machine.send(.loadingWasRequested(id: "1")) }
    }
}
