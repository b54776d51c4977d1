import Foundation
@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
@_spi(GroveInternal) import GroveWire
import Testing

/// Issue 34, attack 3: the coordinator attributes each worker crash (reported by the worker's
/// next process with its registration) to the event's pattern and to the client key that sent
/// it, quarantines the pattern for every address, suspends the key, and tells the supervisor
/// which exits no longer count.
@Suite("Coordinator core: crash containment", .timeLimit(.minutes(2)))
struct CoordinatorCorePoisonTests {
    static let mallory = String(repeating: "M", count: 40)
    static let alice = String(repeating: "A", count: 40)
    static let sender = Gatekeeper.Principal.client([.init(key: "m.key", roles: [.send, .read], machines: ["counter*"])])
    static let admin = Gatekeeper.Principal.client([.init(key: "a.key", roles: [.admin])])

    /// Client `client` (key `key`) sends `json` to `address`; the decision.
    static func send(_ fixture: inout CoreFixture, from client: String, key: String, _ json: String, to address: String,
                     correlation: UInt64) -> ClientDecision {
        let number = fixture.core.containment.number(ofSender: key + " 127.0.0.1")
        let message = WireMessage(Header(.event, correlation: correlation), address: address, payload: Array(json.utf8))
        return MessageView.with(message) { fixture.core.decide(client: Array(client.utf8), $0, as: sender, sender: number) }
    }

    /// The worker a keyed counter instance is placed on.
    static func worker(of address: String, in fixture: CoreFixture) -> String {
        fixture.core.topology.placement(ofMachine: "counter", key: String(address.dropFirst("counter/".count)))!
    }

    /// `worker`'s process dies running the event request `id` carried (fsm-launch saw it exit
    /// with `blamesEvent`); its next process, `pid`, registers with the report.
    static func crash(_ fixture: inout CoreFixture, _ worker: String, runningRequest id: UInt64, at address: String, event: String = "add",
                      newPID pid: Int32, incarnation: UInt64, blamesEvent: Bool = true) -> [CoordinatorAction] {
        let oldPID = fixture.core.workers[worker]!.pid!
        fixture.core.noteExit(of: worker, pid: oldPID, blamesEvent: blamesEvent)
        _ = fixture.core.lose(worker, reason: "process killed by signal 4", cause: .exited)
        var registration = CoreFixture.registration(worker)
        registration.pid = pid
        registration.incarnation = incarnation
        registration.startedAtMs = Int64(incarnation)
        registration.crash = CrashReport(address: address, type: "Counter", event: event, origin: "sent", correlation: id)
        return fixture.register(registration)
    }

    static func warnings(_ actions: [CoordinatorAction]) -> [String] {
        actions.compactMap { if case .warn(let text) = $0 { text } else { nil } }
    }

    static func forgiven(_ actions: [CoordinatorAction]) -> [Int32] {
        actions.compactMap { if case .forgive(_, let pid, _) = $0 { pid } else { nil } }
    }

    @Test func twoCrashesOnFreshKeysQuarantineThePatternAndSuspendTheSender() throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        // Two fresh keys on the same worker, so one worker's restarts carry both reports.
        let keys = (1...40).map { "counter/k-\($0)" }.filter { Self.worker(of: $0, in: fixture) == "data-1" }
        var pid: Int32 = 300
        var firstCrash: [CoordinatorAction] = []
        var secondCrash: [CoordinatorAction] = []
        for (round, address) in keys.prefix(2).enumerated() {
            guard case .forward(_, let id) = Self.send(&fixture, from: "m", key: Self.mallory, #"{"add":{"_0":9223372036854775807}}"#,
                                                       to: address, correlation: UInt64(round + 1)) else {
                Issue.record("not forwarded")
                return
            }
            pid += 1
            let actions = Self.crash(&fixture, "data-1", runningRequest: id, at: address, newPID: pid, incarnation: UInt64(10 + round))
            if round == 0 { firstCrash = actions } else { secondCrash = actions }
            // The metrics count the quarantine, once, when the second crash makes it.
            #expect(fixture.core.counts.quarantines == round)
        }
        let first = Self.warnings(firstCrash).joined(separator: "\n")
        #expect(first.contains("crash 1 of Counter.add (2 quarantine it)"), "\(first)")
        #expect(first.contains("crash 1 of client key \(Self.mallory)"), "\(first)")
        #expect(Self.forgiven(firstCrash).isEmpty)

        let second = Self.warnings(secondCrash).joined(separator: "\n")
        #expect(second.contains("quarantined Counter.add for every address"), "\(second)")
        #expect(second.contains("suspended client key \(Self.mallory)"), "\(second)")
        // Both exits were caused by input now contained: neither counts toward escalation.
        #expect(Self.forgiven(secondCrash) == [201, 301])
        // The restarted worker learns the pattern in its welcome; its pool sibling at once.
        let welcome = try #require(secondCrash.compactMap(\.sentToWorker).first { $0.message.header.kind == .welcome })
        #expect(try payload(Welcome.self, of: welcome.message).quarantined == [PoisonPattern(type: "Counter", event: "add")])
        let pushed = try #require(secondCrash.compactMap(\.sentToWorker).first { $0.message.header.kind == .quarantine })
        #expect(pushed.worker == "data-2")
        #expect(try payload(QuarantinedPatterns.self, of: pushed.message).patterns == [PoisonPattern(type: "Counter", event: "add")])

        // The suspended key is refused its events, saying why and how an admin lifts it.
        guard case .act(let refused) = Self.send(&fixture, from: "m", key: Self.mallory, "increment", to: "counter/x", correlation: 9) else {
            Issue.record("a suspended key's event was forwarded")
            return
        }
        let error = try errorReply(in: refused, to: "m", correlation: 9)
        #expect(error.code == .forbidden)
        #expect(error.message.contains("suspended: 2 worker crashes"), "\(error.message)")
        #expect(error.message.contains("fsm-send suspensions lift '\(Self.mallory)'"), "\(error.message)")
        // Another key is served.
        guard case .forward = Self.send(&fixture, from: "a", key: Self.alice, "increment", to: "counter/x", correlation: 10) else {
            Issue.record("another key was refused")
            return
        }
    }

    @Test func aKillFromOutsideIsNotCounted() throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        let address = (1...40).map { "counter/k-\($0)" }.first { Self.worker(of: $0, in: fixture) == "data-1" }!
        for round in 0..<3 {
            guard case .forward(_, let id) = Self.send(&fixture, from: "m", key: Self.mallory, "increment", to: address,
                                                       correlation: UInt64(round + 1)) else {
                Issue.record("not forwarded")
                return
            }
            let actions = Self.crash(&fixture, "data-1", runningRequest: id, at: address, event: "increment", newPID: Int32(400 + round),
                                     incarnation: UInt64(20 + round), blamesEvent: false)
            #expect(Self.warnings(actions).contains { $0.contains("killed from outside") }, "\(actions)")
        }
        #expect(fixture.core.containment.ledger.patterns.isEmpty)
        #expect(!fixture.core.containment.hasSuspensions)
    }

    /// An attacker's worker key (group edge, hosting nothing of auth's) re-registered three
    /// times with made-up crash reports and quarantined AuthFlow.login for every address: a
    /// report counts only for a machine placed on that worker, of its type, and with a witness
    /// (fsm-launch saw the exit, or a client's request at that address was lost with it).
    @Test func aWorkersMadeUpCrashReportsAreNotCounted() throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        let own = (1...40).map { "counter/k-\($0)" }.first { Self.worker(of: $0, in: fixture) == "data-1" }!
        let elsewhere = (1...40).map { "counter/k-\($0)" }.first { Self.worker(of: $0, in: fixture) == "data-2" }!
        for (round, report) in [
            CrashReport(address: elsewhere, type: "Counter", event: "add", origin: "sent", correlation: nil),
            CrashReport(address: own, type: "AuthFlow", event: "login", origin: "sent", correlation: nil),
            CrashReport(address: own, type: "Counter", event: "add", origin: "sent", correlation: 12345),
        ].enumerated() {
            _ = fixture.core.lose("data-1", reason: "gone", cause: .exited)
            var registration = CoreFixture.registration("data-1")
            registration.pid = Int32(700 + round)
            registration.incarnation = UInt64(70 + round)
            registration.startedAtMs = Int64(70 + round)
            registration.crash = report
            let actions = fixture.register(registration)
            #expect(Self.warnings(actions).contains { $0.contains("not counted") }, "\(report): \(actions)")
        }
        #expect(fixture.core.containment.ledger.crashes.isEmpty)
        #expect(fixture.core.containment.ledger.patterns.isEmpty)
    }

    @Test func aReportSentAgainIsCountedOnce() throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        let address = (1...40).map { "counter/k-\($0)" }.first { Self.worker(of: $0, in: fixture) == "data-1" }!
        let first = Self.crash(&fixture, "data-1", runningRequest: 77, at: address, newPID: 500, incarnation: 30)
        #expect(Self.warnings(first).contains { $0.contains("last process died") }, "\(first)")
        // The same process registers again (a retry before its welcome arrived).
        var again = CoreFixture.registration("data-1")
        again.pid = 500
        again.incarnation = 30
        again.startedAtMs = 30
        again.crash = CrashReport(address: address, type: "Counter", event: "add", origin: "sent", correlation: 77)
        _ = fixture.register(again)
        #expect(fixture.core.containment.ledger.crashes.count == 1)
        #expect(fixture.core.containment.ledger.patterns.isEmpty)
    }

    @Test func anAdminListsLiftsAndReleases() throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        let address = (1...40).map { "counter/k-\($0)" }.first { Self.worker(of: $0, in: fixture) == "data-2" }!
        for round in 0..<2 {
            guard case .forward(_, let id) = Self.send(&fixture, from: "m", key: Self.mallory, #""increment""#, to: address,
                                                       correlation: UInt64(round + 1)) else {
                Issue.record("not forwarded")
                return
            }
            _ = Self.crash(&fixture, "data-2", runningRequest: id, at: address, event: "increment", newPID: Int32(600 + round),
                           incarnation: UInt64(40 + round))
        }
        func poison(_ request: PoisonRequest, as principal: Gatekeeper.Principal?) throws -> [CoordinatorAction] {
            let message = WireMessage(Header(.poison, correlation: 5), payload: try WireJSON.encode(request))
            guard case .act(let actions) = MessageView.with(message, { fixture.core.decide(client: Array("op".utf8), $0, as: principal) }) else {
                Issue.record("a poison request was forwarded")
                return []
            }
            return actions
        }
        #expect(try errorReply(in: try poison(PoisonRequest(.list), as: Self.sender), to: "op", correlation: 5).code == .forbidden)
        let listed = try #require(try poison(PoisonRequest(.list), as: Self.admin).first?.sentToClient)
        #expect(listed.message.header.kind == .poisonList)
        let list = try payload(PoisonList.self, of: listed.message)
        #expect(list.suspended.map(\.key) == [Self.mallory])
        #expect(list.quarantined.map { PoisonPattern(type: $0.type, event: $0.event) } == [PoisonPattern(type: "Counter", event: "increment")])

        let lifted = try poison(PoisonRequest(.lift, key: Self.mallory), as: Self.admin)
        #expect(lifted.compactMap(\.sentToClient).first?.message.header.kind == .accepted)
        #expect(try errorReply(in: try poison(PoisonRequest(.lift, key: Self.mallory), as: Self.admin), to: "op", correlation: 5).code
            == .unknownPoison)
        guard case .act(let stillQuarantined) = Self.send(&fixture, from: "m", key: Self.mallory, "increment", to: address, correlation: 8) else {
            // Forwarded: the key is served again (the worker refuses the quarantined pattern itself).
            let released = try poison(PoisonRequest(.release, type: "Counter", event: "increment"), as: Self.admin)
            #expect(released.compactMap(\.sentToClient).first?.message.header.kind == .accepted)
            let pushes = released.compactMap(\.sentToWorker).filter { $0.message.header.kind == .quarantine }
            #expect(Set(pushes.map(\.worker)) == ["data-1", "data-2"])
            for push in pushes { #expect(try payload(QuarantinedPatterns.self, of: push.message).patterns.isEmpty) }
            return
        }
        Issue.record("a lifted key was refused: \(stillQuarantined)")
    }
}
