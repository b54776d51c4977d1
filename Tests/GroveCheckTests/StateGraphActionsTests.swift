import Foundation
import Grove
import GroveCheck
import GroveExamples
import Testing

/// A kettle that starts heating: the state timeout that boils it is armed by the initial
/// state's enter action, so only the start effect arms it (no transition enters `heating`).
private enum Kettle: StateScoped, Checkable {
    typealias Checked = Kettle
    enum State: Sendable, CaseIterable, NonTerminal { case heating, boiled }
    enum Event: Sendable, CaseIterable { case boil, poke }
    static var initialState: State { .heating }

    static func update(_ state: inout State, event: Event) -> Effect {
        switch (state, event) {
        case (.heating, .boil):
            state = .boiled
            return .none
        case (.heating, .poke), (.boiled, .boil), (.boiled, .poke):
            return .unhandled
        }
    }

    static func enter(_ state: State) -> Effect {
        switch state {
        case .heating: .stateTimeout(after: .seconds(90), send: .boil)
        case .boiled: .merge([.output(.whistled), .after(.milliseconds(250), id: "lamp", send: .poke)])
        }
    }

    static func exit(_ state: State) -> Effect {
        switch state {
        case .heating: .cancel("lamp")
        case .boiled: .none
        }
    }

    enum Output: Sendable { case whistled }
}

/// A pump whose timer id holds what ends a Mermaid description or label (`:`, `;`) or starts a
/// comment (`#`).
private enum Pump: StateScoped, Checkable {
    typealias Checked = Pump
    enum State: Sendable, CaseIterable { case running, stopped }
    enum Event: Sendable, CaseIterable { case stop }
    static var initialState: State { .running }
    static func isTerminal(_ state: State) -> Bool { state == .stopped }

    static func update(_ state: inout State, event: Event) -> Effect {
        state = .stopped
        return .none
    }

    static func enter(_ state: State) -> Effect {
        switch state {
        case .running: .after(.seconds(1), id: "pump:1;a#b", send: .stop)
        case .stopped: .none
        }
    }
}

@Suite("StateGraph: start effect, enter and exit actions, postponed events", .timeLimit(.minutes(2)))
struct StateGraphActionsTests {
    @Test("Mermaid text: a timer id's `:`, `;` and `#` are written as `,` in descriptions and arrow labels")
    func mermaidText() {
        let graph = StateGraph.explore(Pump.self)
        #expect(graph.mermaid == """
            stateDiagram-v2
                [*] --> running
                running : entry / timer pump,1,a,b 1s sends stop
                running --> stopped: stop (timer pump,1,a,b)
                stopped --> [*]

            """, "\(graph.mermaid)")
    }

    @Test("the timers the start effect arms are pending in the initial state: its timeout is drawn as one")
    func startEffectArmsTimers() {
        let graph = StateGraph.explore(Kettle.self)
        #expect(graph.edges.map { "\($0.from) \($0.event) \($0.to) \($0.timeout ?? "-")" } == ["heating boil boiled state timeout"])
        // Leaving heating cancels its state timeout: a boil in boiled can only come from outside;
        // the lamp's poke, armed on entering boiled, only there.
        #expect(graph.timerNotArmed.map { "\($0.state) \($0.event)" } == ["heating poke", "boiled boil"])
        #expect(graph.unhandled.map { "\($0.state) \($0.event)" } == ["boiled poke"])
    }

    @Test("a StateScoped machine's enter and exit actions are summarized per state case, as text")
    func enterAndExitActions() {
        let graph = StateGraph.explore(Kettle.self)
        #expect(graph.actions.map { [$0.state] + $0.lines } == [
            ["heating", "entry / state timeout 90s sends boil", "exit / cancel lamp"],
            ["boiled", "entry / output whistled", "entry / timer lamp 250ms sends poke"],
        ])
    }

    @Test("BufferedConnection: timeouts armed on entry, sends postponed, drawn in the states and not as arrows")
    func bufferedConnection() {
        let graph = StateGraph.explore(BufferedConnection.self)
        #expect(graph.actions.map { [$0.state] + $0.lines } == [
            ["offline", "send / defer"],
            ["connecting", "entry / state timeout 5s sends dialTimedOut", "send / defer"],
            ["backingOff", "entry / state timeout 1s sends retry", "send / defer"],
        ])
        #expect(!graph.edges.contains { $0.event == "send" && $0.from != "online" }, "a postponed send is no transition: \(graph.edges)")
        #expect(graph.edges.contains { $0.from == "connecting" && $0.event == "dialTimedOut" && $0.to == "backingOff" && $0.timeout == "state timeout" })

        let mermaid = graph.mermaid
        #expect(mermaid.contains("\n    connecting : entry / state timeout 5s sends dialTimedOut\n    connecting : send / defer\n"), "\(mermaid)")
        #expect(mermaid.contains("\n    offline : send / defer\n"), "\(mermaid)")
        #expect(graph.dot.contains(#"    "connecting" [label="connecting\nentry / state timeout 5s sends dialTimedOut\nsend / defer"];"#), "\(graph.dot)")
        #expect(graph.report.contains("enter and exit actions, postponed events (information) (5):\n  offline: send / defer\n"
            + "  connecting: entry / state timeout 5s sends dialTimedOut\n"), "\(graph.report)")
    }

    @Test("a machine without enter, exit or postpone has no actions, and its drawings none")
    func noActions() {
        let graph = StateGraph.explore(LoginFlow.self)
        #expect(graph.actions.isEmpty)
        #expect(!graph.mermaid.contains(" : "))
    }

    @Test("nested states are drawn as Mermaid composites, holding their descriptions and the arrows between them")
    func nestingDrawsComposites() throws {
        var graph = StateGraph.explore(BufferedConnection.self)
        #expect(graph.nesting.isEmpty, "a flat machine")
        let flat = graph.mermaid
        graph.nesting = try ["connecting", "backingOff"].map {
            try JSONDecoder().decode(StateGraph.Nesting.self, from: Data(#"{"state":"\#($0)","parent":"dialing"}"#.utf8))
        }
        #expect(graph.mermaid == """
            stateDiagram-v2
                [*] --> offline
                offline : send / defer
                state dialing {
                    connecting : entry / state timeout 5s sends dialTimedOut
                    connecting : send / defer
                    backingOff : entry / state timeout 1s sends retry
                    backingOff : send / defer
                    connecting --> backingOff: dialTimedOut (state timeout)
                    backingOff --> connecting: retry (state timeout)
                }
                offline --> connecting: connect
                connecting --> online: linkUp
                online --> connecting: linkDown
                online --> online: send
                connecting --> offline: dialTimedOut (state timeout)

            """, "\(graph.mermaid)")
        #expect(flat != graph.mermaid)
    }
}
