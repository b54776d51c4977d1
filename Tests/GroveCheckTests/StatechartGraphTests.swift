import Grove
import GroveCheck
import GroveExamples
import Testing

/// An oven whose `on` level arms a state timeout that moving between its children keeps, and a
/// timer of its own whose id reads as the level's reserved one (`<state-timeout/on>`).
private enum Oven: Statechart, Checkable {
    typealias Checked = Oven
    enum State: Sendable, CaseIterable, NonTerminal { case off, heating, holding }
    enum Event: Sendable, CaseIterable { case power, ready, done, ping }
    enum Node: Hashable, Sendable { case off, on, heating, holding }
    static var initialState: State { .off }

    static func parent(of node: Node) -> Node? {
        switch node {
        case .off, .on: nil
        case .heating, .holding: .on
        }
    }

    static func leaves(of state: State) -> [Node] {
        switch state {
        case .off: [.off]
        case .heating: [.heating]
        case .holding: [.holding]
        }
    }

    static func handle(_ event: Event, in node: Node, state: inout State) -> Effect {
        switch (node, event) {
        case (.off, .power): state = .heating; return .none
        case (.heating, .ready): state = .holding; return .none
        case (.on, .done): state = .off; return .none
        case (.off, _), (.on, _), (.heating, _), (.holding, _): return .unhandled
        }
    }

    static func enter(_ node: Node, state: State) -> Effect {
        switch node {
        case .on: .merge([.stateTimeout(after: .seconds(60), in: .on, send: .done),
                          .after(.seconds(1), id: EffectID("<state-timeout/on>"), send: .ping)])
        case .off, .heating, .holding: .none
        }
    }

    static func exit(_ node: Node, state: State) -> Effect {
        switch node {
        case .heating: .cancel("fan")
        case .off, .on, .holding: .none
        }
    }
}

/// A player and its volume side by side: regions of the parallel `media`.
private enum Media: Statechart, Checkable {
    typealias Checked = Media
    struct State: Sendable, NonTerminal { var playing = false, muted = false }
    enum Event: Sendable, CaseIterable { case play, mute }
    enum Node: Hashable, Sendable { case media, player, volume, paused, playing, loud, muted }
    static var initialState: State { State() }
    static func node(of state: State) -> String { stateKey(state) }

    static func parent(of node: Node) -> Node? {
        switch node {
        case .media: nil
        case .player, .volume: .media
        case .paused, .playing: .player
        case .loud, .muted: .volume
        }
    }

    static func leaves(of state: State) -> [Node] { [state.playing ? .playing : .paused, state.muted ? .muted : .loud] }

    static func handle(_ event: Event, in node: Node, state: inout State) -> Effect {
        switch (node, event) {
        case (.player, .play): state.playing.toggle(); return .none
        case (.volume, .mute): state.muted.toggle(); return .none
        case (.media, _), (.player, _), (.volume, _), (.paused, _), (.playing, _), (.loud, _), (.muted, _): return .unhandled
        }
    }
}

@Suite("StateGraph of a Statechart: nesting, level actions, level timeouts", .timeLimit(.minutes(2)))
struct StatechartGraphTests {
    @Test("a level's state timeout is named by its level and kept apart from a user id of the same text")
    func levelTimeouts() {
        let graph = StateGraph.explore(Oven.self)
        #expect(graph.edges.map { "\($0.from) \($0.event) \($0.to) \($0.timeout ?? "-")" } == [
            "off power heating -", "heating ready holding -", "heating done off state timeout of on", "holding done off state timeout of on",
        ])
        // Leaving `on` cancels its level timeout, not the user's timer that reads the same.
        #expect(graph.timerNotArmed.map { "\($0.state) \($0.event)" } == ["off done"])
    }

    @Test("each level's enter and exit are summarized under the level, the leaf's under the state")
    func levelActions() {
        let graph = StateGraph.explore(Oven.self)
        #expect(graph.actions.map { [$0.state] + $0.lines } == [
            ["on", "entry / state timeout of on 60s sends done", "entry / timer <state-timeout/on> 1s sends ping"],
            ["heating", "exit / cancel fan"],
        ])
    }

    /// Mermaid refuses a description line for a composite ("Group nodes can only have label"),
    /// and with one line shows it instead of the name: a level's actions are in its label.
    @Test("nesting comes from parent(of:): states in their leaf's parent, levels in theirs, drawn as composites")
    func nesting() {
        let graph = StateGraph.explore(Oven.self)
        #expect(graph.nesting.map { "\($0.state) in \($0.parent)" } == ["heating in on", "holding in on"])
        #expect(graph.mermaid == """
            stateDiagram-v2
                [*] --> off
                state "on<br/>entry / state timeout of on 60s sends done<br/>entry / timer <state-timeout/on> 1s sends ping" as on {
                    heating : exit / cancel fan
                    holding
                    heating --> holding: ready
                }
                off --> heating: power
                heating --> off: done (state timeout of on)
                holding --> off: done (state timeout of on)

            """, "\(graph.mermaid)")
    }

    @Test("a parallel state sits in the deepest level its regions share")
    func parallelNesting() {
        let graph = StateGraph.explore(Media.self)
        #expect(graph.reachable.count == 4)
        #expect(Set(graph.nesting.map(\.parent)) == ["media"])
        #expect(graph.nesting.map(\.state) == graph.reachable)
    }

    @Test("AuthFlowChart: its sign-in steps inside signingIn, the second factor's inside twoFactor, each level's actions")
    func authFlowChart() {
        let graph = StateGraph.explore(AuthFlowChart.self)
        #expect(Dictionary(graph.nesting.map { ($0.state, $0.parent) }, uniquingKeysWith: { first, _ in first }) == [
            "credentials": "signingIn", "authenticating": "signingIn", "failed": "signingIn", "twoFactor": "signingIn",
            "awaitingCode": "twoFactor", "enteringCode": "twoFactor", "verifying": "twoFactor",
        ])
        let lines = Dictionary(graph.actions.map { ($0.state, $0.lines) }, uniquingKeysWith: { first, _ in first })
        #expect(lines["twoFactor"] == ["entry / state timeout of twoFactor 300s sends logout"])
        #expect(lines["verifying"] == ["entry / io VerifyTwoFactor", "exit / cancel \(AuthFlow.verifyID)",
                                       "updateTwoFactorCode / defer", "submitTwoFactor / defer"])
        #expect(lines["authenticating"]?.suffix(2) == ["updateTwoFactorCode / defer", "submitTwoFactor / defer"])
        #expect(!graph.edges.contains { ["authenticating", "verifying"].contains($0.from) && $0.event == "submitTwoFactor" },
                "a postponed event is no arrow")
        #expect(lines["signedIn"] == ["entry / output signedIn"])
        #expect(graph.edges.contains { $0.from == "awaitingCode" && $0.event == "logout" && $0.timeout == "state timeout of twoFactor" })
    }
}
