import Grove
import Testing

private enum Light: Equatable, Sendable { case off, on(level: Int), broken(String) }
private enum Command: Equatable, Sendable { case turnOn, dimmed(Int), failed(String), ping }

/// StateMachinePackage style: the side effect is a dependency the closure captures.
private func makeLight(dim: @escaping @Sendable () async -> Int?) -> StateMachine<Light, Command> {
    let dimmer = SideEffect<Light, Command>(id: "dim") { await dim().map(Command.dimmed) }
    return StateMachine(initial: .off) { state, event in
        switch (state, event) {
        case (.off, .turnOn):
            return .newState(state: .on(level: 0), output: dimmer)
        case (.on, .dimmed(let level)):
            return .newState(.on(level: level))
        case (_, .failed(let message)):
            return .newState(.broken(message))
        case (.on, .ping):
            return .sameState(output: dimmer)
        default:
            return .sameState()
        }
    }
}

@Suite("StateMachinePackage dialect", .timeLimit(.minutes(2)))
struct StateMachineDialectTests {
    private let machine = makeLight { 5 }

    @Test("the closure's transitions can be tested without a host")
    func reduceWithoutHost() async throws {
        let transition = machine.reduce(.off, .turnOn)
        guard case .newState(let next, let output?) = transition else {
            Issue.record("expected a new state with a side effect, got \(transition)")
            return
        }
        #expect(next == .on(level: 0))
        #expect(output.id == "dim")
        #expect(await output() == .dimmed(5))
        guard case .sameState(nil) = machine.reduce(.off, .dimmed(3)) else {
            Issue.record("expected sameState without output")
            return
        }
    }

    @Test("a new state is committed and its side effect becomes a named task")
    func newStateRunsSideEffect() async {
        var state = HostedStateMachine.State(machine)
        #expect(state.current == .off)
        let effect = HostedStateMachine.update(&state, event: .event(.turnOn))
        #expect(state.current == .on(level: 0))
        #expect(effect.dialectShape == .work(id: "dim", kind: "task", catches: false))
        #expect((await effect.runWork(env: ()))?.map(\.event) == [.dimmed(5)])
    }

    @Test("a side effect returning nil sends nothing")
    func nilSideEffect() async {
        var state = HostedStateMachine.State(makeLight { nil })
        let effect = HostedStateMachine.update(&state, event: .event(.turnOn))
        #expect((await effect.runWork(env: ()))?.isEmpty == true)
    }

    @Test("a new state without output runs nothing")
    func newStateWithoutOutput() {
        var state = HostedStateMachine.State(machine)
        state.current = .on(level: 0)
        #expect(HostedStateMachine.update(&state, event: .event(.dimmed(9))).isNone)
        #expect(state.current == .on(level: 9))
        #expect(HostedStateMachine.update(&state, event: .event(.failed("fuse"))).isNone)
        #expect(state.current == .broken("fuse"))
    }

    @Test("sameState() is unhandled: state kept, reported, not repeated to observers")
    func sameStateIsUnhandled() {
        var state = HostedStateMachine.State(machine)
        #expect(HostedStateMachine.update(&state, event: .event(.ping)).isUnhandled)
        #expect(state.current == .off)
    }

    @Test("sameState(output:) keeps the state and runs the side effect")
    func sameStateWithOutput() {
        var state = HostedStateMachine.State(machine)
        state.current = .on(level: 1)
        #expect(HostedStateMachine.update(&state, event: .event(.ping)).dialectShape == .work(id: "dim", kind: "task", catches: false))
        #expect(state.current == .on(level: 1))
    }
}
