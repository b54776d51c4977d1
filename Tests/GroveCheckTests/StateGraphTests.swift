import Grove
import GroveCheck
import GroveExamples
import GroveTesting
import Synchronization
import Testing

/// A turnstile with the faults the checker must find: `push` is unhandled while locked,
/// `broken` is declared but unreachable, `kick` answers differently each time it is run.
private enum FaultyTurnstile: Machine, Checkable {
    typealias Checked = FaultyTurnstile

    enum State: Sendable, CaseIterable, NonTerminal {
        case locked, unlocked, broken
    }

    enum Event: Sendable, CaseIterable {
        case coin, push, kick
    }

    static let kicks = Atomic<Int>(0)

    static var initialState: State { .locked }

    static func update(_ state: inout State, event: Event) -> Effect {
        switch (state, event) {
        case (.locked, .coin):
            state = .unlocked
        case (.unlocked, .push):
            state = .locked
        case (.unlocked, .coin):
            break
        case (.locked, .push), (.broken, .coin), (.broken, .push), (.broken, .kick):
            return .unhandled
        case (.locked, .kick), (.unlocked, .kick):
            // Depends on something outside the state: not a function of (state, event).
            let kicks = kicks.add(1, ordering: .relaxed).newValue
            state = kicks.isMultiple(of: 2) ? .locked : .unlocked
        }
        return .none
    }
}

/// A turnstile whose transitions await, with the faults the checker must find: `push` is
/// unhandled while locked (`sameState()`), `broken` is declared but unreachable, `kick` answers
/// differently each time it is awaited.
private enum AwaitingTurnstile: AwaitingStateMachineProgram, AwaitingCheckable {
    typealias Program = AwaitingTurnstile
    enum State: Sendable, CaseIterable { case locked, unlocked, broken }
    enum Event: Sendable, CaseIterable { case coin, push, kick }

    static let kicks = Atomic<Int>(0)

    static var stateMachine: StateMachine<State, Event> {
        StateMachine(initial: .locked) { state, event async in
            await Task.yield()
            switch (state, event) {
            case (.locked, .coin): return .newState(.unlocked)
            case (.unlocked, .push): return .newState(.locked)
            case (.unlocked, .coin): return .sameState(output: SideEffect { nil })
            case (.locked, .push), (.broken, _): return .sameState()
            case (.locked, .kick), (.unlocked, .kick):
                let kicks = kicks.add(1, ordering: .relaxed).newValue
                return .newState(kicks.isMultiple(of: 2) ? .locked : .unlocked)
            }
        }
    }
}

@Suite("StateGraph", .timeLimit(.minutes(2)))
struct StateGraphTests {
    @Test("a deliberately faulty machine: unhandled, unreachable and nondeterministic pairs are named")
    func faultyMachineIsCaught() {
        let graph = StateGraph.explore(FaultyTurnstile.self)
        #expect(graph.unhandled.map { "\($0.state) \($0.event)" } == ["locked push"])
        #expect(graph.unreachable == ["broken"])
        #expect(Set(graph.nondeterministic.map(\.event)) == ["kick"])
        #expect(graph.fallsThrough.map { "\($0.state) \($0.event)" } == ["unlocked coin"])
        #expect(graph.terminal.isEmpty)
        #expect(!graph.isClean)
        #expect(graph.report.contains("unhandled pairs (1):\n  locked: push\n"))
        #expect(graph.report.contains("unreachable states (1):\n  broken\n"))
        #expect(graph.report.hasSuffix("not clean\n"))
    }

    @Test("the test-kit expectation records an issue for each finding of the faulty machine")
    func expectationCatchesFaults() {
        var reported: [String] = []
        expectCompleteStateGraph(FaultyTurnstile.self) { message, _ in reported.append(message) }
        #expect(reported.count == 5, "\(reported)")
        for finding in ["locked + push is unhandled", "locked + kick gave different results", "unlocked + kick gave different results",
                        "the declared state broken is unreachable", "unlocked + coin falls through"] {
            #expect(reported.contains { $0.contains(finding) }, "missing '\(finding)' in \(reported)")
        }
        var allowed: [String] = []
        expectCompleteStateGraph(FaultyTurnstile.self, allowUnhandled: true) { message, _ in allowed.append(message) }
        #expect(allowed.count == 4, "allowUnhandled drops only the unhandled pair: \(allowed)")
        var fallThroughAllowed: [String] = []
        expectCompleteStateGraph(FaultyTurnstile.self, allowFallThrough: true) { message, _ in fallThroughAllowed.append(message) }
        #expect(fallThroughAllowed.count == 4, "allowFallThrough drops only the pair that falls through: \(fallThroughAllowed)")
    }

    @Test("a deliberately faulty machine whose transitions await: its findings are named, and the expectation records them")
    func faultyAwaitingMachineIsCaught() async {
        let graph = await StateGraph.explore(awaiting: AwaitingTurnstile.self)
        #expect(graph.unhandled.map { "\($0.state) \($0.event)" } == ["locked push"])
        #expect(graph.unreachable == ["broken"])
        #expect(Set(graph.nondeterministic.map(\.event)) == ["kick"])
        #expect(graph.edges.contains { $0.from == "locked" && $0.event == "coin" && $0.to == "unlocked" })
        #expect(graph.fallsThrough.isEmpty, "sameState(output:) is handled: it has an effect")
        #expect(!graph.isClean)
        var reported: [String] = []
        await expectCompleteStateGraph(awaiting: AwaitingTurnstile.self) { message, _ in reported.append(message) }
        #expect(reported.count == 4, "\(reported)")
    }

    @Test("LoginFlow, the seed's transducer, is complete by Oak's definition only: its default: break falls through")
    func loginFlow() {
        let graph = expectCompleteStateGraph(LoginFlow.self, allowFallThrough: true)
        #expect(!graph.isClean)
        #expect(graph.isClean(allowingFallThrough: true))
        #expect(graph.reachable == ["start", "enteringCredentials", "authenticating", "authenticated", "failed", "completed"])
        #expect(graph.terminal == ["completed"])
        #expect(graph.fallsThrough.contains { $0.state == "start" && $0.event == "submitCredentials" },
                "the seed's default: break ignores the other pairs")
        #expect(graph.mermaid == """
            stateDiagram-v2
                [*] --> start
                start --> enteringCredentials: startLogin
                enteringCredentials --> enteringCredentials: updateEmail, updatePassword
                enteringCredentials --> authenticating: submitCredentials
                authenticating --> authenticated: authenticationSucceeded
                authenticating --> failed: authenticationFailed
                authenticated --> completed: loginComplete
                failed --> enteringCredentials: startLogin
                completed --> [*]

            """)
    }

    @Test("AuthFlow reaches every step; what it leaves unhandled is named, nothing else")
    func authFlow() {
        let graph = expectCompleteStateGraph(AuthFlow.self, allowUnhandled: true, allowFallThrough: true)
        #expect(graph.fallsThrough.map { "\($0.state) \($0.event)" } == ["enteringTwoFactor updateTwoFactorCode"],
                "typing the one sample code again changes nothing")
        #expect(graph.cannotEnd.isEmpty, "every step can still end in locked")
        #expect(graph.unreachable.isEmpty)
        #expect(graph.nondeterministic.isEmpty)
        #expect(graph.terminal == ["locked"])
        #expect(!graph.unhandled.isEmpty)
        #expect(graph.dot.hasPrefix("digraph \"AuthFlow\" {"))
    }

    @Test("UserForm reaches validating through validate, and every declared state")
    func userForm() {
        let graph = expectCompleteStateGraph(UserForm.self, allowUnhandled: true)
        #expect(graph.edges.contains { $0.from == "editing" && $0.event == "validate" && $0.to == "validating" })
        #expect(Set(graph.terminal) == ["submitted", "cancelled"])
    }

    @Test("the other shipped examples: no nondeterminism, no unreachable declared state, no truncated walk",
          arguments: ShippedExamples.names.filter { !["LoginFlow", "AuthFlow", "UserForm"].contains($0) })
    func shippedExamples(name: String) async throws {
        let expect = try #require(ShippedExamples.expectations[name], "no expectation for \(name)")
        let graph = await expect()
        #expect(graph.machine == name)
    }

    @Test("case names come from the enum case, with or without a payload")
    func caseNames() {
        #expect(caseName(of: LoginFlow.State.start) == "start")
        #expect(caseName(of: LoginFlow.State.enteringCredentials(email: "a", password: "b")) == "enteringCredentials")
        #expect(caseName(of: LoginFlow.Event.authenticationFailed(LoginFlow.Failure("x"))) == "authenticationFailed")
    }
}
