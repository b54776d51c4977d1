@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
import GroveWire
import Testing
import ZeroMQ

/// Subscriptions bounded in size and number per watcher key, and in all: past a bound the
/// prefix is not observed, the events endpoint's connections are reset (the only way libzmq
/// frees what it holds for them), and a key past its own bound is refused from then on.
@Suite("CoordinatorCore: subscription bounds", .timeLimit(.minutes(2)))
struct CoordinatorCoreSubscriptionBoundsTests {
    static let keyA = String(repeating: "A", count: 40)
    static let keyB = String(repeating: "B", count: 40)

    static func fixture(_ limits: Topology.Limits) -> CoreFixture {
        var topology = CoreFixture.topology
        topology.limits = limits
        var fixture = CoreFixture(topology: topology)
        fixture.registerAll()
        return fixture
    }

    static func subscribe(_ prefix: String) -> [UInt8] { [1] + Array(prefix.utf8) }
    static func unsubscribe(_ prefix: String) -> [UInt8] { [0] + Array(prefix.utf8) }
    static func user(_ key: String) -> String { key + " 127.0.0.1" }

    static func resets(_ actions: [CoordinatorAction]) -> [String?] {
        actions.compactMap { if case .resetWatchers(let key) = $0 { key } else { nil } }
    }

    @Test func aKeyPastItsOwnBoundIsRefusedAndTheEventsEndpointReset() {
        var fixture = Self.fixture(.init(watcherSubscriptions: 3, subscriptions: 10))
        for index in 0..<3 {
            let told = fixture.core.subscription(Self.subscribe("state:counter/\(index)"), from: Self.user(Self.keyA))
            #expect(told.compactMap(\.sentToWorker).count == 3, "every worker learns the new prefix")
        }
        // B has its own count; a prefix A already made costs B nothing (XPUB does not repeat it).
        #expect(!fixture.core.subscription(Self.subscribe("state:auth"), from: Self.user(Self.keyB)).isEmpty)
        let past = fixture.core.subscription(Self.subscribe("state:counter/3"), from: Self.user(Self.keyA))
        #expect(Self.resets(past) == [Self.keyA])
        #expect(past.compactMap(\.sentToWorker).isEmpty, "the prefix past the bound is not observed")
        #expect(!fixture.core.subscriptions.contains("state:counter/3"))
        let warning = past.compactMap { if case .warn(let text) = $0 { text } else { nil } }.first ?? ""
        #expect(warning.contains("limits.watcherSubscriptions") && warning.contains(Self.keyA) && warning.contains("refused"))
        #expect(fixture.core.watchers.refused == [Self.keyA])
        // What libzmq still had queued from A's connections: ignored, no second reset.
        #expect(fixture.core.subscription(Self.subscribe("state:counter/4"), from: Self.user(Self.keyA)).isEmpty)
        // The reset closes the connections: libzmq reports each prefix gone, without a User-Id.
        for index in 0..<3 { _ = fixture.core.subscription(Self.unsubscribe("state:counter/\(index)")) }
        _ = fixture.core.subscription(Self.unsubscribe("state:auth"))
        #expect(fixture.core.subscriptions.isEmpty && fixture.core.watchers.made.isEmpty && fixture.core.watchers.owners.isEmpty)
    }

    /// A reviewer's dashboard with one prefix too many was locked out for good: the refusal is
    /// listed with the suspensions and an admin lifts it the same way.
    @Test func anAdminListsAndLiftsAWatcherKeysRefusal() throws {
        var fixture = Self.fixture(.init(watcherSubscriptions: 1, subscriptions: 10))
        _ = fixture.core.subscription(Self.subscribe("state:a"), from: Self.user(Self.keyA))
        #expect(Self.resets(fixture.core.subscription(Self.subscribe("state:b"), from: Self.user(Self.keyA))) == [Self.keyA])
        func poison(_ request: PoisonRequest) throws -> [CoordinatorAction] {
            let message = WireMessage(Header(.poison, correlation: 5), payload: try WireJSON.encode(request))
            guard case .act(let actions) = MessageView.with(message, { fixture.core.decide(client: Array("op".utf8), $0, as: .trusted) }) else {
                Issue.record("a poison request was forwarded")
                return []
            }
            return actions
        }
        let listed = try #require(try poison(PoisonRequest(.list)).first?.sentToClient)
        #expect(try payload(PoisonList.self, of: listed.message).refusedWatchers == [Self.keyA])
        let lifted = try poison(PoisonRequest(.lift, key: Self.keyA))
        #expect(lifted.contains { if case .admitWatcher(Self.keyA) = $0 { true } else { false } })
        #expect(lifted.compactMap(\.sentToClient).first?.message.header.kind == .accepted)
        #expect(fixture.core.watchers.refused.isEmpty)
        // Its next subscriptions count afresh once the reset's unsubscriptions arrived.
        _ = fixture.core.subscription(Self.unsubscribe("state:a"))
        #expect(Self.resets(fixture.core.subscription(Self.subscribe("state:a"), from: Self.user(Self.keyA))).isEmpty)
        #expect(try errorReply(in: try poison(PoisonRequest(.lift, key: Self.keyA)), to: "op", correlation: 5).code == .unknownPoison)
    }

    @Test func everyWatcherTogetherIsBoundedAndTrustedWatchersCountThere() {
        var fixture = Self.fixture(.init(watcherSubscriptions: 2, subscriptions: 4))
        for index in 0..<4 {
            #expect(Self.resets(fixture.core.subscription(Self.subscribe("state:p\(index)"), from: Gatekeeper.trustedUser)).isEmpty)
        }
        #expect(fixture.core.watchers.made.isEmpty, "a trusted watcher has no key to count against")
        let past = fixture.core.subscription(Self.subscribe("state:p4"), from: Gatekeeper.trustedUser)
        #expect(Self.resets(past) == [nil], "reset, but no key to refuse")
        #expect(fixture.core.subscriptions.count == 4)
        #expect(past.contains { if case .warn(let text) = $0 { text.contains("limits.subscriptions (4)") } else { false } })
        // Until libzmq reports prefixes gone, the rest of what it queued resets nothing more.
        #expect(fixture.core.subscription(Self.subscribe("state:p5"), from: Gatekeeper.trustedUser).isEmpty)
        _ = fixture.core.subscription(Self.unsubscribe("state:p0"))
        #expect(Self.resets(fixture.core.subscription(Self.subscribe("state:p6"), from: Gatekeeper.trustedUser)).isEmpty)
        #expect(Self.resets(fixture.core.subscription(Self.subscribe("state:p7"), from: Gatekeeper.trustedUser)) == [nil],
                "past the bound again once there was room: reset again")
    }

    /// A subscription longer than any topic is refused at the socket (ZMQ_MAXMSGSIZE); should
    /// one get through (the socket's limit is never under 1 KiB), it counts as past the bound.
    @Test func aPrefixLongerThanAnyTopicIsNeverObserved() {
        var fixture = Self.fixture(.init(addressBytes: 32))
        let long = "state:" + String(repeating: "x", count: 40)
        let actions = fixture.core.subscription(Self.subscribe(long), from: Self.user(Self.keyA))
        #expect(Self.resets(actions) == [Self.keyA])
        #expect(fixture.core.subscriptions.isEmpty)
        #expect(fixture.core.topology.limits.subscriptionBytes == 8 + 32)
    }

    @Test func anUnsubscriptionFreesItsMakersPlace() {
        var fixture = Self.fixture(.init(watcherSubscriptions: 1, subscriptions: 4))
        _ = fixture.core.subscription(Self.subscribe("state:a"), from: Self.user(Self.keyA))
        _ = fixture.core.subscription(Self.unsubscribe("state:a"), from: Self.user(Self.keyA))
        #expect(Self.resets(fixture.core.subscription(Self.subscribe("state:b"), from: Self.user(Self.keyA))).isEmpty)
        #expect(fixture.core.subscriptions == ["state:b"])
    }

    @Test func theGatekeeperRefusesARefusedWatchersKeyOnTheEventsEndpointOnly() throws {
        var topology = CoreFixture.topology
        topology.security = .init(coordinatorKey: "c.key_secret", clients: [.init(key: "w.key", roles: [.read, .send])])
        let key = try #require(CurveKey(z85: "rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7"))
        var gatekeeper = Gatekeeper(topology: topology, workerKeys: [:], clientKeys: [key], uid: 0)
        func request(_ domain: Gatekeeper.Endpoint) -> [[UInt8]] {
            [Array("1.0".utf8), Array("1".utf8), Array(domain.rawValue.utf8), Array("127.0.0.1".utf8), [], Array("CURVE".utf8), key.bytes]
        }
        #expect(gatekeeper.answer(request(.events)).admitted)
        gatekeeper.refuse(watcher: key)
        let refused = gatekeeper.answer(request(.events))
        #expect(!refused.admitted)
        #expect(refused.refusal?.contains("limits.watcherSubscriptions") == true)
        #expect(gatekeeper.answer(request(.clients)).admitted, "its requests are still served")
    }
}
