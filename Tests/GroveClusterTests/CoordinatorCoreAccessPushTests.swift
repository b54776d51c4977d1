import Foundation
@testable import GroveCluster
@testable import GroveCoordinator
@_spi(GroveInternal) import GroveWire
import Testing

/// What the coordinator tells a worker serving direct routes (docs/DIRECT-ROUTES.md 1.5): the
/// welcome's `direct` part, then `access` (client keys, grants, suspensions) and `placement`
/// (handoff), each pushed again on every change, and to no worker that does not serve them.
@Suite("CoordinatorCore: access and placement pushes", .timeLimit(.minutes(2)))
struct CoordinatorCoreAccessPushTests {
    static let mallory = CoordinatorCorePoisonTests.mallory
    static let alice = CoordinatorCorePoisonTests.alice

    /// The unit topology with its `data` pool serving direct routes.
    static var topology: Topology {
        var topology = CoreFixture.topology
        topology.workers[1].direct = true
        return topology
    }

    static func direct(_ worker: String) -> Registration {
        var registration = CoreFixture.registration(worker)
        registration.direct = "ipc:///run/grove/unit/direct/\(worker).0000000000000001"
        return registration
    }

    static func sent(_ kind: MessageKind, in actions: [CoordinatorAction]) -> [(worker: String, message: WireMessage)] {
        actions.compactMap(\.sentToWorker).filter { $0.message.header.kind == kind }
    }

    @Test func aWelcomeWithDirectIsFollowedByTheAccessTable() throws {
        var fixture = CoreFixture(topology: Self.topology)
        _ = fixture.core.admitClients([(Self.alice, [.init(key: "a.key", roles: [.send], machines: ["counter*"])]),
                                       (Self.mallory, [.init(key: "m.key", roles: [.read])])])
        _ = fixture.register("edge")
        let actions = fixture.register(Self.direct("data-1"))
        let toWorker = actions.compactMap(\.sentToWorker).map(\.message.header.kind)
        let welcome = try #require(toWorker.firstIndex(of: .welcome))
        #expect(toWorker.firstIndex(of: .access) == welcome + 1, "\(toWorker)")
        let settings = try #require(try payload(Welcome.self, of: Self.sent(.welcome, in: actions)[0].message).direct)
        #expect(settings.pool == ["data-1", "data-2"])
        #expect(settings.limits.addressBytes == Self.topology.limits.addressBytes)
        #expect(settings.queues.clientOutbox == 100 && settings.queues.workerOutbox == 100)
        let table = try payload(ClientTable.self, of: Self.sent(.access, in: actions)[0].message)
        #expect(table.clients.map(\.key) == [Self.alice, Self.mallory].sorted())
        let alice = try #require(table.clients.first { $0.key == Self.alice })
        #expect(alice.grants == [ClientTable.Grant(roles: ["send"], machines: ["counter*"])])
        // Numbered as the crash ledger numbers a key's requests.
        #expect(alice.number == fixture.core.containment.number(ofSender: Self.alice + " 127.0.0.1"))
        #expect(table.suspended.isEmpty)
    }

    @Test func noWorkerThatDoesNotServeDirectRoutesGetsEither() throws {
        // A group without `direct`: a worker registering an endpoint gets no direct part.
        var plain = CoreFixture()
        _ = plain.core.admitClients([(Self.alice, [.init(key: "a.key", roles: [.send])])])
        let actions = plain.register(Self.direct("data-1"))
        #expect(try payload(Welcome.self, of: Self.sent(.welcome, in: actions)[0].message).direct == nil)
        #expect(Self.sent(.access, in: actions).isEmpty)
        // A group with it, whose worker registered no endpoint (an older worker).
        var older = CoreFixture(topology: Self.topology)
        let registered = older.register("data-1")
        #expect(try payload(Welcome.self, of: Self.sent(.welcome, in: registered)[0].message).direct == nil)
        #expect(Self.sent(.access, in: older.core.admitClients([(Self.alice, [.init(key: "a.key", roles: [.send])])])).isEmpty)
    }

    @Test func admittingAClientKeyPushesTheTable() throws {
        var fixture = CoreFixture(topology: Self.topology)
        _ = fixture.register("edge")
        _ = fixture.register(Self.direct("data-1"))
        _ = fixture.register(Self.direct("data-2"))
        let actions = fixture.core.admitClients([(Self.alice, [.init(key: "view", roles: [.read])])])
        let pushed = Self.sent(.access, in: actions)
        #expect(pushed.map(\.worker) == ["data-1", "data-2"])
        #expect(try payload(ClientTable.self, of: pushed[0].message).clients.map(\.key) == [Self.alice])
    }

    @Test func aSuspensionAndItsLiftPushTheTable() throws {
        var fixture = CoreFixture(topology: Self.topology)
        _ = fixture.core.admitClients([(Self.mallory, [.init(key: "m.key", roles: [.send, .read], machines: ["counter*"])])])
        _ = fixture.register("edge")
        _ = fixture.register(Self.direct("data-1"))
        _ = fixture.register(Self.direct("data-2"))
        let keys = (1...40).map { "counter/k-\($0)" }.filter { CoordinatorCorePoisonTests.worker(of: $0, in: fixture) == "data-1" }
        var suspending: [CoordinatorAction] = []
        for (round, address) in keys.prefix(2).enumerated() {
            guard case .forward(_, let id) = CoordinatorCorePoisonTests.send(&fixture, from: "m", key: Self.mallory, #"{"add":{"_0":1}}"#,
                                                                              to: address, correlation: UInt64(round + 1)) else {
                Issue.record("not forwarded")
                return
            }
            var registration = Self.direct("data-1")
            registration.pid = Int32(300 + round)
            registration.incarnation = UInt64(10 + round)
            registration.startedAtMs = Int64(10 + round)
            registration.crash = CrashReport(address: address, type: "Counter", event: "add", origin: "sent", correlation: id)
            let oldPID = fixture.core.workers["data-1"]!.pid!
            fixture.core.noteExit(of: "data-1", pid: oldPID, blamesEvent: true)
            _ = fixture.core.lose("data-1", reason: "killed", cause: .exited)
            suspending = fixture.register(registration)
        }
        let number = fixture.core.containment.number(ofSender: Self.mallory)
        // Pushed to the sibling at the suspension, and to the restarted worker after its welcome.
        let pushed = Self.sent(.access, in: suspending)
        #expect(Set(pushed.map(\.worker)) == ["data-1", "data-2"])
        for push in pushed {
            let suspended = try payload(ClientTable.self, of: push.message).suspended
            #expect(suspended.map(\.number) == [number] && suspended.first?.crashes == 2, "\(suspended)")
        }

        let lift = WireMessage(Header(.poison, correlation: 5), payload: try WireJSON.encode(PoisonRequest(.lift, key: Self.mallory)))
        guard case .act(let lifted) = MessageView.with(lift, { fixture.core.decide(client: Array("op".utf8), $0, as: .trusted) }) else {
            Issue.record("a poison request was forwarded")
            return
        }
        let afterLift = Self.sent(.access, in: lifted)
        #expect(afterLift.map(\.worker) == ["data-1", "data-2"])
        for push in afterLift { #expect(try payload(ClientTable.self, of: push.message).suspended.isEmpty) }
    }

    @Test func placementIsSentOnWelcomeAndOnEachHandoffChange() throws {
        var topology = CoordinatorCoreHandoffTests.topology()
        topology.workers[1].direct = true
        var fixture = CoordinatorCoreHandoffTests.Fixture(topology: topology)
        func register(_ name: String, at seconds: Double = 0) -> [CoordinatorAction] {
            var registration = CoordinatorCoreHandoffTests.registration(name)
            registration.direct = "ipc:///run/grove/handoff/direct/\(name).0000000000000001"
            return fixture.core.fromWorker(Array(name.utf8), WireMessage(Header(.register), address: name,
                                                                         payload: try! WireJSON.encode(registration)).frames[...],
                                           now: fixture.t0 + .seconds(seconds))
        }
        _ = fixture.register("edge")
        let welcomed = register("data-1")
        let first = try #require(Self.sent(.placement, in: welcomed).first)
        #expect(first.worker == "data-1")
        #expect(try payload(PlacementView.self, of: first.message) == PlacementView(generation: fixture.core.registrations))
        _ = register("data-2")
        _ = register("data-3")
        let key = try CoordinatorCoreHandoffTests.key(on: "data-1")
        _ = fixture.send(to: "counter/\(key)")

        // Lost: nothing changes until the grace runs out; then the survivors learn it once.
        #expect(Self.sent(.placement, in: fixture.core.lose("data-1", reason: "killed", cause: .exited)).isEmpty)
        #expect(Self.sent(.placement, in: fixture.tick(at: 0.1)).isEmpty)
        let handedOff = Self.sent(.placement, in: fixture.tick(at: 1.1))
        #expect(handedOff.map(\.worker) == ["data-2", "data-3"])
        #expect(try payload(PlacementView.self, of: handedOff[0].message).handedOff == ["data-1"])
        #expect(Self.sent(.placement, in: fixture.tick(at: 1.2)).isEmpty, "no change, nothing sent")

        // Back: its adopted instance is being handed back; everyone, itself included, is told.
        let adopter = try fixture.send(to: "counter/\(key)").get()
        let back = Self.sent(.placement, in: register("data-1", at: 2))
        #expect(Set(back.map(\.worker)) == ["data-1", "data-2", "data-3"])
        for push in back { #expect(try payload(PlacementView.self, of: push.message) == PlacementView(generation: fixture.core.registrations, handingBack: ["data-1"])) }

        // Released by the adopter and by the pool's other worker, which may hold some of
        // data-1's instances too (adopted by a direct client): home again.
        let other = adopter == "data-2" ? "data-3" : "data-2"
        #expect(Self.sent(.placement, in: fixture.released(["counter/\(key)"], homes: ["data-1"], by: adopter)).isEmpty,
                "\(other) has not let go yet")
        let home = Self.sent(.placement, in: fixture.released([], homes: ["data-1"], by: other))
        #expect(home.count == 3)
        for push in home { #expect(try payload(PlacementView.self, of: push.message).handingBack.isEmpty) }
    }
}
