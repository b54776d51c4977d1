import Grove
import GroveRuntime
import Synchronization
import Testing

/// StateMachinePackage's `transitions` are `(State, Event) async -> Transition`: a transition may
/// await. Grove runs it in the machine's turn; events sent meanwhile wait behind it and take
/// effect after it, in order, each from the state the one before committed.
@Suite("Seed 003: async transitions", .timeLimit(.minutes(2)))
struct AsyncTransitionsTests {
    /// Lets an awaiting transition go on when the test says so.
    final class Gate: Sendable {
        private let state = Mutex<(open: Bool, waiting: [CheckedContinuation<Void, Never>])>((false, []))

        func wait() async {
            await withCheckedContinuation { continuation in
                let resume = state.withLock { state in
                    if state.open { return true }
                    state.waiting.append(continuation)
                    return false
                }
                if resume { continuation.resume() }
            }
        }

        func open() {
            for waiter in state.withLock({ state in state.open = true; return Swift.exchange(&state.waiting, with: []) }) {
                waiter.resume()
            }
        }

        /// Whether a transition waits at the gate now.
        var isWaitedAt: Bool { state.withLock { !$0.waiting.isEmpty } }
    }

    /// How long a test waits for the first transition to start. In the full unit run (1,700
    /// tests on a 2-thread cooperative pool) the machine's tasks were seen to wait more than
    /// 60 s for a thread while the pool was saturated and other builds shared the cores; alone
    /// they start within milliseconds. Under the suite's two-minute limit, with room for the rest.
    static let patience = Duration.seconds(100)

    enum Step: Sendable, Equatable { case append(String), finished(String) }

    /// Appends each word; the transition for "slow" awaits `gate` first, and "fetch" starts a
    /// side effect whose event comes back while a later transition may still await.
    static func machine(gate: Gate) -> StateMachine<[String], Step> {
        StateMachine(initial: []) { state, event in
            switch event {
            case .append("slow"):
                await gate.wait()
                return .newState(state + ["slow"])
            case .append("fetch"):
                return .newState(state + ["fetch"], output: SideEffect { .finished("fetched") })
            case .append(let word), .finished(let word):
                return .newState(state + [word])
            }
        }
    }

    /// The states of `machine` after `events`, as its iteration yields them, until `count` came.
    static func states(of machine: AsyncStateMachine<[String], Step>, count: Int) async -> [[String]] {
        var seen: [[String]] = []
        for await state in machine {
            seen.append(state)
            if seen.count == count { break }
        }
        return seen
    }

    @Test func theSeedsTransitionsAreCalledAsTheSeedSaysWithAwait() async {
        let machine = makeStateMachine(load: Load(apiService: ApiService()))
        guard case .newState(.loading, let output?) = await machine.transition(.idle, .loadingwasRequested(id: "3")) else {
            Issue.record("a request from idle must start loading with a side effect")
            return
        }
        guard case .loadingHasSucceeded(30)? = await output() else {
            Issue.record("the side effect loads through the api service")
            return
        }
    }

    @Test func aTransitionThatAwaitsHoldsTheMachineAndLaterEventsWaitInOrder() async throws {
        let gate = Gate()
        let machine = AsyncStateMachine(Self.machine(gate: gate))
        #expect(Self.machine(gate: gate).awaitsInTransitions, "a closure that awaits makes an async machine")
        let collecting = Task { await Self.states(of: machine, count: 4) }
        try machine.send(.append("slow"))
        try machine.send(.append("b"))
        try machine.send(.append("c"))
        let deadline = ContinuousClock.now + Self.patience
        while !gate.isWaitedAt, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(2)) }
        try #require(gate.isWaitedAt, "the first transition never awaited")
        #expect(await machine.state == [], "nothing takes effect while the first transition awaits")
        gate.open()
        #expect(await collecting.value == [[], ["slow"], ["slow", "b"], ["slow", "b", "c"]],
                "each event once, in the order sent, each from the state the one before committed")
        await machine.stop()
    }

    @Test func aSideEffectsEventWaitsBehindAnAwaitingTransition() async throws {
        let gate = Gate()
        let machine = AsyncStateMachine(Self.machine(gate: gate))
        let collecting = Task { await Self.states(of: machine, count: 4) }
        try machine.send(.append("fetch"))
        try machine.send(.append("slow"))
        let deadline = ContinuousClock.now + Self.patience
        while !gate.isWaitedAt, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(2)) }
        try #require(gate.isWaitedAt)
        gate.open()
        let states = await collecting.value
        // "slow" began as "fetch" committed, before its side effect could answer: "fetched" waited.
        #expect(states == [[], ["fetch"], ["fetch", "slow"], ["fetch", "slow", "fetched"]], "\(states)")
        await machine.stop()
    }

    @Test func theSameEventsGiveTheSameStatesEveryRun() async throws {
        var runs: [[[String]]] = []
        for _ in 0 ..< 3 {
            let gate = Gate()
            gate.open()
            let machine = AsyncStateMachine(Self.machine(gate: gate))
            let collecting = Task { await Self.states(of: machine, count: 5) }
            for word in ["a", "slow", "b", "c"] { try machine.send(.append(word)) }
            runs.append(await collecting.value)
            await machine.stop()
        }
        #expect(runs.allSatisfy { $0 == [[], ["a"], ["a", "slow"], ["a", "slow", "b"], ["a", "slow", "b", "c"]] }, "\(runs)")
    }

    @Test @MainActor func aViewStateMachineRunsAsyncTransitions() async throws {
        let gate = Gate()
        gate.open()
        let view = ViewStateMachine(stateMachine: Self.machine(gate: gate))
        let starting = Task { await view.start() }
        view.send(.append("slow"))
        view.send(.append("b"))
        let deadline = ContinuousClock.now + Self.patience
        while view.state != ["slow", "b"], ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(2)) }
        #expect(view.state == ["slow", "b"])
        await view.stop()
        await starting.value
    }
}
