import GroveWire
import Testing
@testable import GroveView

/// The live view's model, fed publications as the events endpoint carries them: no sockets.
@Suite(.timeLimit(.minutes(2)))
struct ViewCoreTests {
    static func state(_ address: String, _ state: JSONValue, worker: String = "main") -> ViewCore.Publication {
        ViewCore.Publication(topic: "state:\(address)", kind: "state-changed", address: address,
                             payload: .object(["address": .string(address), "worker": .string(worker), "state": state]))
    }

    static func effect(_ address: String, _ id: JSONValue, _ phase: String) -> ViewCore.Publication {
        ViewCore.Publication(topic: "effect:\(address)", kind: "effect", address: address, payload: .object([
            "address": .string(address), "effect": id, "request": .string("Authenticate"), "worker": .string("io"), "phase": .string(phase),
        ]))
    }

    @Test func aStateIsShownOnItsGraphNodeByItsCase() {
        #expect(ViewCore.node(of: .object(["loggingIn": .object([:])])) == "loggingIn")
        #expect(ViewCore.node(of: .string("idle")) == "idle")
        // A struct's fields name no case: shown, not highlighted.
        #expect(ViewCore.node(of: .object(["count": .integer(1), "step": .integer(2)])) == nil)
        #expect(ViewCore.node(of: .integer(3)) == nil)
    }

    @Test func aStructStateIsPlacedOnItsGraphByTheNodeItHolds() {
        // AuthFlow's state: its step is the node (its Checkable's node(of:)); the rest is not.
        let state = JSONValue.object(["attempts": .integer(1), "step": .object(["enteringCredentials": .object([
            "email": .string("locked"), "password": .string("<redacted>"),
        ])])])
        let names: Set = ["unauthenticated", "enteringCredentials", "locked"]
        #expect(ViewCore.node(of: state, among: names) == "enteringCredentials")
        #expect(ViewCore.node(of: state) == nil)
        // A string that is a node's name counts, after the keys of its depth.
        #expect(ViewCore.node(of: .object(["phase": .string("locked")]), among: names) == "locked")
        #expect(ViewCore.node(of: .object(["phase": .string("elsewhere")]), among: names) == nil)
    }

    @Test func statesSeenBeforeTheGraphsArePlacedOnThemWhenTheyCome() {
        var core = ViewCore(machineTypes: ["auth": "AuthFlow"])
        let state = JSONValue.object(["attempts": .integer(0), "step": .object(["unauthenticated": .object([:])])])
        _ = core.apply(Self.state("auth", state), now: 1)
        #expect(core.states["auth"]?.node == nil)
        core.setGraphNodes(["AuthFlow": ["unauthenticated", "enteringCredentials"]])
        #expect(core.states["auth"]?.node == "unauthenticated")
    }

    /// The live view's flake (theGraphHighlightsTheStateAnFsmSendCaused): a transition made
    /// before the workers described the graphs was kept as `? → ?` for good, since only the
    /// states were named again when the graphs came.
    @Test func aTransitionSeenBeforeTheGraphsIsNamedByThemWhenTheyCome() {
        var core = ViewCore(machineTypes: ["auth": "AuthFlow"])
        let step = { (name: String) in JSONValue.object(["failedAttempts": .integer(0), "maxAttempts": .integer(3),
                                                         "step": .object([name: .object([:])])]) }
        _ = core.apply(Self.state("auth", step("unauthenticated")), now: 1)
        let made = core.apply(Self.state("auth", step("enteringCredentials")), now: 2)
        #expect(made.last?.json.objectValue?["to"] == .null, "no graph yet: no node")
        core.setGraphNodes(["AuthFlow": ["unauthenticated", "enteringCredentials"]])
        let shown = core.snapshot(covering: { _ in true })["recent"]
        let transition = JSONValue.object(["type": .string("transition"), "address": .string("auth"), "from": .string("unauthenticated"),
                                           "to": .string("enteringCredentials"), "at": .integer(2)])
        #expect(shown == .array([transition]))
        #expect(core.recent == [transition])
    }

    @Test func theFirstStateIsWhereAMachineStandsAndTheNextOneATransition() {
        var core = ViewCore()
        let first = core.apply(Self.state("auth", .object(["idle": .object([:])])), now: 1_000)
        #expect(first.count == 1)
        #expect(first[0].address == "auth")
        #expect(first[0].json.objectValue?["node"] == .string("idle"))
        #expect(core.recent.isEmpty)
        let second = core.apply(Self.state("auth", .object(["editing": .object(["email": .string("a")])])), now: 2_000)
        #expect(second.map { $0.json.objectValue?["type"] } == [.string("state"), .string("transition")])
        #expect(second[1].json.objectValue?["from"] == .string("idle"))
        #expect(second[1].json.objectValue?["to"] == .string("editing"))
        #expect(core.states["auth"]?.node == "editing")
        #expect(core.recent.count == 1)
    }

    @Test func aStateTakenAgainFromASnapshotMovesTheMachineWithoutATransition() {
        var core = ViewCore()
        _ = core.apply(Self.state("auth", .object(["idle": .object([:])])), now: 1_000)
        var resync = Self.state("auth", .object(["locked": .object([:])]))
        resync.kind = ViewCore.resyncKind
        let updates = core.apply(resync, now: 2_000)
        // Where it stands now is shown; the transitions it went through were missed, not made up.
        #expect(updates.map { $0.json.objectValue?["type"] } == [.string("state")])
        #expect(core.states["auth"]?.node == "locked")
        #expect(core.recent.isEmpty)
    }

    @Test func anIOCallIsInFlightFromStartedUntilItEnds() {
        var core = ViewCore()
        let started = core.apply(Self.effect("auth", .string("authenticate"), "started"), now: 5)
        #expect(started.first?.json.objectValue?["phase"] == .string("started"))
        #expect(core.effects.count == 1)
        #expect(core.snapshot(covering: { _ in true })["effects"] == .array([started[0].json]))
        let ended = core.apply(Self.effect("auth", .string("authenticate"), "completed"), now: 9)
        #expect(ended.first?.json.objectValue?["phase"] == .string("completed"))
        #expect(core.effects.isEmpty)
        // An end nobody saw start (the view came later) changes nothing.
        #expect(core.apply(Self.effect("auth", .integer(7), "failed"), now: 10).isEmpty)
    }

    /// What a worker publishes of its machine's own work (`LocalEffectEvent`).
    static func local(_ address: String, _ id: JSONValue, kind: String, _ phase: String, deadlineNs: Int64? = nil) -> ViewCore.Publication {
        var payload: [String: JSONValue] = ["address": .string(address), "worker": .string("main"), "effect": id, "kind": .string(kind),
                                            "phase": .string(phase)]
        if let deadlineNs { payload["deadlineNs"] = .integer(deadlineNs) }
        return ViewCore.Publication(topic: "effect:\(address)", kind: "effect", address: address, payload: .object(payload))
    }

    @Test func aTimerIsShownWithItsKindAndDeadlineUntilItFiresOrIsCancelled() throws {
        var core = ViewCore()
        let tick = JSONValue.object(["reserved": .string("state-timeout")])
        let started = core.apply(Self.local("poller/eu", tick, kind: "timer", "started", deadlineNs: 1_700_003_600_123_456_789), now: 5)
        let json = try #require(started.first?.json.objectValue)
        #expect(json["kind"] == .string("timer") && json["deadline"] == .integer(1_700_003_600_123), "\(json)")
        #expect(json["worker"] == .string("main") && json["request"] == .string(""))
        #expect(core.snapshot(covering: { _ in true })["effects"] == .array([started[0].json]))
        // Replaced: the old one goes, the new one (same id) comes.
        #expect(core.apply(Self.local("poller/eu", tick, kind: "timer", "replaced"), now: 6).first?.json.objectValue?["phase"] == .string("replaced"))
        #expect(core.effects.isEmpty)
        _ = core.apply(Self.local("poller/eu", tick, kind: "timer", "started", deadlineNs: 2_000_000_000_000_000_000), now: 7)
        #expect(core.effects.values.first?.deadline == 2_000_000_000_000)
        for phase in ["cancelled", "fired", "passivated"] {
            _ = core.apply(Self.local("poller/eu", tick, kind: "timer", "started", deadlineNs: 1), now: 8)
            #expect(core.apply(Self.local("poller/eu", tick, kind: "timer", phase), now: 9).count == 1, "\(phase)")
            #expect(core.effects.isEmpty, "\(phase)")
        }
    }

    @Test func tasksAndLocalIOAreShownByKindAndACoordinatorsCallAsAnIOCall() {
        var core = ViewCore()
        _ = core.apply(Self.local("auth", .integer(3), kind: "stream", "started"), now: 1)
        _ = core.apply(Self.effect("auth", .string("authenticate"), "started"), now: 1)
        let kinds = Dictionary(uniqueKeysWithValues: core.effects.values.map { ($0.effect.description, $0.kind) })
        #expect(kinds == ["3": "stream", JSONValue.string("authenticate").description: "io-call"], "\(kinds)")
        #expect(core.effects.values.allSatisfy { $0.deadline == nil })
        _ = core.apply(Self.local("auth", .integer(3), kind: "stream", "finished"), now: 2)
        #expect(core.effects.values.map(\.kind) == ["io-call"])
    }

    @Test func aMachineThatEndsTakesItsCallsWithIt() {
        var core = ViewCore()
        _ = core.apply(Self.effect("poller/eu", .string("poll-fetch"), "started"), now: 1)
        _ = core.apply(Self.effect("poller/us", .string("poll-fetch"), "started"), now: 1)
        let ended = core.apply(ViewCore.Publication(topic: "machine:poller/eu", kind: "machine", address: "poller/eu",
                                                    payload: .object(["reason": .string("stopped")])), now: 2)
        #expect(ended.first?.json.objectValue?["type"] == .string("ended"))
        #expect(core.effects.values.map(\.address) == ["poller/us"])
    }

    @Test func aViewerSnapshotHoldsOnlyTheMachinesItsGrantsCover() {
        var core = ViewCore()
        _ = core.apply(Self.state("auth", .string("idle")), now: 1)
        _ = core.apply(Self.state("poller/eu", .string("idle")), now: 1)
        _ = core.apply(Self.effect("auth", .string("authenticate"), "started"), now: 1)
        let snapshot = core.snapshot(covering: { $0.hasPrefix("poller") })
        guard case .array(let states)? = snapshot["states"] else { Issue.record("no states"); return }
        #expect(states.map { $0.objectValue?["address"] } == [.string("poller/eu")])
        #expect(snapshot["effects"] == .array([]))
    }

    @Test func ratesCountTransitionsOverTheLastTenSeconds() {
        var core = ViewCore()
        _ = core.apply(Self.state("auth", .string("a")), now: 0)
        for second in 1...5 { _ = core.apply(Self.state("auth", .string(second % 2 == 0 ? "a" : "b")), now: Int64(second) * 1000) }
        #expect(core.rates(now: 5_500).json.objectValue?["total"] == .number(0.5))
        #expect(core.rates(now: 5_500).json.objectValue?["machines"] == .object(["auth": .number(0.5)]))
        // Ten seconds on, none of them counts.
        #expect(core.rates(now: 16_000).json.objectValue?["total"] == .number(0))
    }

    @Test func keyedInstancesPastTheCapacityAreCountedNotKept() {
        var core = ViewCore()
        for key in 0..<ViewCore.stateCapacity { _ = core.apply(Self.state("counter/\(key)", .string("idle")), now: 1) }
        #expect(core.apply(Self.state("counter/extra", .string("idle")), now: 1).isEmpty)
        #expect(core.omitted == 1)
        // One it keeps still changes.
        #expect(core.apply(Self.state("counter/3", .string("busy")), now: 2).count == 2)
    }
}
