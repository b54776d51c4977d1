import Grove
import GroveCheck
import GroveExamples
import GroveTesting
import Testing

/// A vending machine with a pair for each completeness outcome: `coin` while idle is handled,
/// `refund` while idle is `.unhandled`, `push` while idle falls through a `default:`, and `push`
/// while paid is a no-op its checker says is intended.
private enum Vending: Machine, Checkable {
    typealias Checked = Vending
    enum State: Sendable, CaseIterable, NonTerminal { case idle, paid }
    enum Event: Sendable, CaseIterable { case coin, refund, push }
    static var initialState: State { .idle }
    static var intendedNoOps: [String: [String]] { ["paid": ["push"]] }

    static func update(_ state: inout State, event: Event) -> Effect {
        switch (state, event) {
        case (.idle, .coin): state = .paid
        case (.paid, .refund): state = .idle
        case (.idle, .refund): return .unhandled
        default: break
        }
        return .none
    }
}

/// A door that ends in `sealed` (terminal), with a `jammed` state it never leaves, and a
/// `sealed` that still handles `open`: both termination findings.
private enum Door: Machine, Checkable {
    typealias Checked = Door
    enum State: Sendable, CaseIterable, Terminable {
        case open, closed, jammed, sealed
        var isTerminal: Bool { self == .sealed }
    }
    enum Event: Sendable, CaseIterable { case open, close, jam, seal }
    static var initialState: State { .open }

    static func update(_ state: inout State, event: Event) -> Effect {
        switch (state, event) {
        case (.open, .close): state = .closed
        case (.closed, .open), (.sealed, .open): state = .open
        case (.open, .jam): state = .jammed
        case (.closed, .seal): state = .sealed
        default: return .unhandled
        }
        return .none
    }
}

/// A blinker whose `tick` comes from timers: a state timeout in `on`, a named timer in `off` that
/// `stop` forgets to cancel (so a tick can still arrive in `stopped`), and an event timeout in
/// `dim` that any event ends.
private enum Blinker: StateScoped, Checkable {
    typealias Checked = Blinker
    enum State: Sendable, CaseIterable, NonTerminal { case idle, on, off, stopped, dim }
    enum Event: Sendable, CaseIterable { case start, tick, flash, stop, dimmed, nudge }
    static var initialState: State { .idle }

    static func update(_ state: inout State, event: Event) -> Effect {
        switch (state, event) {
        case (.idle, .start):
            state = .on
            return .stateTimeout(after: .seconds(1), send: .tick)
        case (.on, .tick):
            state = .off
            return .after(.seconds(1), id: "blink", send: .flash)
        case (.off, .flash):
            state = .on
            return .stateTimeout(after: .seconds(1), send: .tick)
        case (.off, .stop):
            state = .stopped
            return .none
        case (.idle, .nudge):
            state = .dim
            return .eventTimeout(after: .seconds(5), send: .dimmed)
        case (.dim, .dimmed), (.dim, .nudge):
            state = .idle
            return .none
        default:
            return .unhandled
        }
    }
}

/// A lamp with no `Checkable` conformance: its events and states are `CaseIterable`, which is
/// all the walk needs. `broken` is never entered.
private enum Lamp: Machine {
    enum State: Sendable, CaseIterable { case off, on, broken }
    enum Event: Sendable, CaseIterable { case toggle }
    static var initialState: State { .off }
    static func update(_ state: inout State, event: Event) -> Effect {
        switch state {
        case .off: state = .on
        case .on: state = .off
        case .broken: return .unhandled
        }
        return .none
    }
}

/// A counter modulo 3 whose state is an `Int`: its states cannot be listed.
private enum Dial: Machine {
    enum Event: Sendable, CaseIterable { case turn }
    static var initialState: Int { 0 }
    static func update(_ state: inout Int, event: Event) -> Effect {
        state = (state + 1) % 3
        return .none
    }
}

@Suite("StateGraph: falls through, termination, timers", .timeLimit(.minutes(2)))
struct StateGraphFindingsTests {
    @Test("a pair a default: swallows falls through: apart from handled and from unhandled pairs, and not clean")
    func fallsThroughIsItsOwnFinding() {
        let graph = StateGraph.explore(Vending.self)
        #expect(graph.edges.map { "\($0.from) \($0.event)" } == ["idle coin", "paid refund"])
        #expect(graph.unhandled.map { "\($0.state) \($0.event)" } == ["idle refund"])
        #expect(graph.fallsThrough.map { "\($0.state) \($0.event)" } == ["idle push", "paid coin"])
        #expect(graph.intendedNoOps.map { "\($0.state) \($0.event)" } == ["paid push"], "intendedNoOps moves the pair out")
        #expect(!graph.isClean(allowingUnhandled: true))
        #expect(graph.isClean(allowingUnhandled: true, allowingFallThrough: true))
        #expect(graph.report.contains("pairs that fall through (no change, no effect: a default:, or intended? see intendedNoOps) (2):\n  idle: push\n  paid: coin\n"),
                "\(graph.report)")
        #expect(graph.report.contains("intended no-ops (information) (1):\n  paid: push\n"), "\(graph.report)")

        var reported: [String] = []
        expectCompleteStateGraph(Vending.self, allowUnhandled: true) { message, _ in reported.append(message) }
        #expect(reported.count == 2 && reported.allSatisfy { $0.contains("falls through") }, "\(reported)")
    }

    @Test("a state that cannot reach a terminal state, and a terminal state that handles an event, are findings")
    func termination() {
        let graph = StateGraph.explore(Door.self)
        #expect(graph.terminal == ["sealed"])
        #expect(graph.cannotEnd.map(\.state) == ["jammed"])
        #expect(graph.leavesTerminal.map { "\($0.state) \($0.event)" } == ["sealed open"])
        #expect(!graph.isClean(allowingUnhandled: true, allowingFallThrough: true))
        #expect(graph.report.contains("states that cannot reach a terminal state (1):\n  jammed   e.g. jammed\n"), "\(graph.report)")
        #expect(graph.report.contains("events a terminal state handles (never run: the host stops there) (1):\n  sealed: open\n"),
                "\(graph.report)")
        #expect(!graph.edges.contains { $0.from == "sealed" }, "a terminal state is not left")

        var reported: [String] = []
        expectCompleteStateGraph(Door.self, allowUnhandled: true) { message, _ in reported.append(message) }
        #expect(reported.contains { $0.contains("jammed cannot reach a terminal state") }, "\(reported)")
        #expect(reported.contains { $0.contains("the terminal state sealed handles open") }, "\(reported)")
    }

    @Test("a machine that runs until stopped has no termination finding")
    func noTerminalStateNoTerminationFinding() {
        let graph = StateGraph.explore(Vending.self)
        #expect(graph.terminal.isEmpty && graph.cannotEnd.isEmpty && graph.leavesTerminal.isEmpty)
    }

    @Test("timer events: drawn as timeouts; unhandled only where a timer that sends them may be pending")
    func timers() {
        let graph = StateGraph.explore(Blinker.self)
        let timeouts = graph.edges.filter { $0.timeout != nil }.map { "\($0.from) \($0.event) \($0.timeout ?? "")" }
        #expect(timeouts == ["on tick state timeout", "dim dimmed event timeout", "off flash timer blink"])
        #expect(graph.edges.contains { $0.from == "dim" && $0.event == "nudge" && $0.timeout == nil })
        #expect(graph.mermaid.contains("    on --> off: tick (state timeout)\n"), "\(graph.mermaid)")
        let unhandled = Set(graph.unhandled.map { "\($0.state) \($0.event)" })
        // The named timer `blink` is not cancelled by stop: a flash may still arrive in stopped.
        #expect(unhandled.contains("stopped flash"))
        // The state timeout ends with `on`: no tick can arrive anywhere else.
        #expect(!unhandled.contains { $0.hasSuffix(" tick") }, "\(unhandled)")
        #expect(Set(graph.timerNotArmed.map { "\($0.state) \($0.event)" }).isSuperset(of: ["idle tick", "off tick", "stopped tick", "idle flash", "idle dimmed"]),
                "\(graph.timerNotArmed)")
        #expect(graph.report.contains("timer events where no timer that sends them is armed (only sent from outside; information)"))
    }

    @Test("PollingService: a tick while idle or paused is no finding, as no tick can be armed there")
    func pollingServiceTicks() {
        let graph = StateGraph.explore(PollingService.self)
        #expect(!graph.unhandled.contains { $0.event == "tick" }, "\(graph.unhandled)")
        #expect(Set(graph.timerNotArmed.map { "\($0.state) \($0.event)" }) == ["idle tick", "paused tick"])
        #expect(graph.edges.contains { $0.from == "polling" && $0.event == "tick" && $0.timeout == "state timeout" })
    }

    @Test("a machine with CaseIterable events and states is walked with no Checkable conformance, unreachable states named")
    func machineByItsCases() {
        let graph = StateGraph.explore(machine: Lamp.self)
        #expect(graph.machine == "Lamp")
        #expect(graph.reachable == ["off", "on"])
        #expect(graph.statesDeclared && graph.unreachable == ["broken"])
        #expect(graph.edges.map { "\($0.from) \($0.event) \($0.to)" } == ["off toggle on", "on toggle off"])
    }

    @Test("a machine whose states cannot be listed: the report says unreachable states were not judged")
    func undeclaredStatesAreNotJudged() {
        let graph = StateGraph.explore(machine: Dial.self)
        #expect(graph.exploredStates == 3 && !graph.truncated)
        #expect(!graph.statesDeclared && graph.unreachable.isEmpty)
        #expect(graph.report.contains("unreachable states: not judged (no declared states: make State CaseIterable or name them in declaredStates)\n"),
                "\(graph.report)")
        #expect(!StateGraph.explore(machine: Lamp.self).report.contains("not judged"))
    }
}
