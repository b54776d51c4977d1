import Foundation
@testable import GroveCluster
@testable import GroveCoordinator
@_spi(GroveInternal) import GroveWire
import Testing

/// `locate` in the coordinator's core (issue 39, docs/DIRECT-ROUTES.md 1.1): where a machine's
/// instances live, per machine, from what the core knows of its workers; any role on the machine
/// allows it; the generation moves whenever placement may have.
@Suite("CoordinatorCore: locate", .timeLimit(.minutes(2)))
struct CoordinatorCoreLocateTests {
    static let client = Array("c".utf8)

    /// The core's answer to a `locate` of `address` from a client holding `principal`: the
    /// location, or the error it was refused with.
    static func locate(_ address: String, in core: inout CoordinatorCore, as principal: Gatekeeper.Principal? = .trusted,
                       correlation: UInt64 = 7) throws -> Result<Location, WireError> {
        let decision = MessageView.with(WireMessage(Header(.locate, correlation: correlation), address: address)) {
            core.decide(client: client, $0, as: principal)
        }
        guard case .act(let actions) = decision, actions.count == 1, let reply = actions[0].sentToClient else {
            Issue.record("a locate should be answered at once, got \(decision)")
            throw WireError(.malformedFrame, "no answer")
        }
        #expect(reply.message.header.correlation == correlation)
        switch reply.message.header.kind {
        case .location: return .success(try payload(Location.self, of: reply.message))
        case .error: return .failure(try payload(WireError.self, of: reply.message))
        default: throw WireError(.malformedFrame, "answered \(reply.message.header.kind)")
        }
    }

    @Test func aKeyedMachineIsLocatedAsItsPoolInPlacementOrder() throws {
        var fixture = CoreFixture()
        var withDirect = CoreFixture.registration("data-2")
        withDirect.direct = "ipc:///run/grove/unit/direct/data-2.00000000000000ff"
        withDirect.incarnation = 0xFFFF_FFFF_FFFF_FF00  // past a double's exact integers
        _ = fixture.register("edge", "data-1")
        _ = fixture.register(withDirect)
        let location = try Self.locate("counter/7", in: &fixture.core).get()
        #expect(location.machine == "counter" && location.keyed)
        #expect(location.heartbeatMs == 1500)
        #expect(location.generation == fixture.core.registrations)
        #expect(location.workers.map(\.name) == CoreFixture.topology.instances(of: "data"))
        #expect(location.workers[0] == Location.Worker(name: "data-1", state: .noDirect))
        #expect(location.workers[1] == Location.Worker(name: "data-2", state: .registered, endpoint: withDirect.direct,
                                                       incarnation: 0xFFFF_FFFF_FFFF_FF00))
        #expect(location.handingBack.isEmpty)
        // The key is ignored: the machine's name alone, or another key, gets the same answer.
        #expect(try Self.locate("counter", in: &fixture.core).get() == location)
        #expect(try Self.locate("counter/other", in: &fixture.core).get() == location)
        // The incarnation is written as the integer it is, not as a double.
        let decision = MessageView.with(WireMessage(Header(.locate, correlation: 1), address: "counter")) {
            fixture.core.decide(client: Self.client, $0)
        }
        guard case .act(let actions) = decision, let reply = actions.first?.sentToClient else { Issue.record("\(decision)"); return }
        #expect(String(decoding: reply.message.payload, as: UTF8.self).contains(#""incarnation":18446744073709551360"#))
    }

    @Test func aSingleMachineIsLocatedOnItsOneInstance() throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        let sink = try Self.locate("sink", in: &fixture.core).get()
        #expect(!sink.keyed)
        #expect(sink.workers == [Location.Worker(name: "data-1", state: .noDirect)])
        let auth = try Self.locate("auth", in: &fixture.core).get()
        #expect(auth.workers.map(\.name) == ["edge"])
    }

    @Test func whatIsNoMachineIsRefusedSayingHowToAddressIt() throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        let unknown = try #require(try Self.locate("nothing", in: &fixture.core).failure)
        #expect(unknown.code == .unknownMachine && unknown.message.contains("known machines: auth"), "\(unknown.message)")
        let keyedSingle = try #require(try Self.locate("sink/3", in: &fixture.core).failure)
        #expect(keyedSingle.code == .unknownMachine && keyedSingle.message.contains("locate it as sink"), "\(keyedSingle.message)")
        let emptyKey = try #require(try Self.locate("counter/", in: &fixture.core).failure)
        #expect(emptyKey.code == .unknownMachine && emptyKey.message.contains("counter/<key>"), "\(emptyKey.message)")
        let control = try #require(try Self.locate("counter/a\u{7}", in: &fixture.core).failure)
        #expect(control.code == .malformedFrame)
    }

    @Test func anyRoleOnTheMachineAllowsALocateAndNoneRefusesIt() throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        let sendOnly = Gatekeeper.Principal.client([.init(key: "s.key", roles: [.send], machines: ["counter*"])])
        #expect(try Self.locate("counter/7", in: &fixture.core, as: sendOnly).get().machine == "counter")
        let readOnly = Gatekeeper.Principal.client([.init(key: "r.key", roles: [.read])])
        #expect(try Self.locate("auth", in: &fixture.core, as: readOnly).get().machine == "auth")
        let adminOnly = Gatekeeper.Principal.client([.init(key: "a.key", roles: [.admin])])
        #expect(try Self.locate("auth", in: &fixture.core, as: adminOnly).get().machine == "auth")

        // A key whose grants cover other machines only has no role here.
        let refused = try #require(try Self.locate("auth", in: &fixture.core, as: sendOnly).failure)
        #expect(refused.code == .forbidden)
        #expect(refused.address == "auth")
        #expect(refused.message.contains("a locate needs a role (read, send or admin) on auth; this client's key has send on counter*"),
                "\(refused.message)")
        // A key with no roles at all, a worker's key, and a key nobody knows.
        let roleless = Gatekeeper.Principal.client([.init(key: "n.key", roles: [])])
        #expect(try Self.locate("counter/7", in: &fixture.core, as: roleless).failure?.code == .forbidden)
        #expect(try Self.locate("counter/7", in: &fixture.core, as: .worker(group: "data")).failure?.code == .forbidden)
        let stranger = try #require(try Self.locate("counter/7", in: &fixture.core, as: nil).failure)
        #expect(stranger.code == .forbidden && stranger.message.contains("not a client key"), "\(stranger.message)")
    }

    @Test func underCurveTheWorkersKeyIsNamed() throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        var registration = CoreFixture.registration("data-1")
        registration.direct = "tcp://127.0.0.1:40001"
        let key = String(repeating: "k", count: 40)
        let message = WireMessage(Header(.register), address: "data-1", payload: try WireJSON.encode(registration))
        _ = fixture.core.fromWorker(Array("data-1-b".utf8), message.frames[...], now: fixture.t0, principal: .worker(group: "data"),
                                    peer: key + " data")
        let location = try Self.locate("counter", in: &fixture.core).get()
        #expect(location.workers[0] == Location.Worker(name: "data-1", state: .registered, endpoint: "tcp://127.0.0.1:40001", serverKey: key))
    }

    @Test func theGenerationMovesOnRegistrationAndLoss() throws {
        var fixture = CoreFixture()
        fixture.register("edge", "data-1")
        let first = try Self.locate("counter", in: &fixture.core).get()
        #expect(first.workers.map(\.state) == [.noDirect, .lost])
        fixture.register("data-2")
        let registered = try Self.locate("counter", in: &fixture.core).get()
        #expect(registered.generation > first.generation)
        #expect(registered.workers.map(\.state) == [.noDirect, .noDirect])
        // Nothing changed: the same answer.
        #expect(try Self.locate("counter", in: &fixture.core).get() == registered)
        _ = fixture.core.lose("data-1", reason: "killed", cause: .exited)
        let lost = try Self.locate("counter", in: &fixture.core).get()
        #expect(lost.generation > registered.generation)
        #expect(lost.workers.map(\.state) == [.lost, .noDirect])
    }

    @Test func aHandedOffWorkerIsListedSoForAMachineThatHandsOff() throws {
        var fixture = CoordinatorCoreHandoffTests.Fixture()
        for name in ["edge", "data-1", "data-2", "data-3"] { fixture.register(name) }
        let key = try CoordinatorCoreHandoffTests.key(on: "data-1")
        #expect(try fixture.send(to: "counter/\(key)").get() == "data-1")
        _ = fixture.core.lose("data-1", reason: "killed", cause: .exited)
        _ = fixture.tick(at: 0.1)
        let withinGrace = try Self.locate("counter", in: &fixture.core).get()
        #expect(withinGrace.workers.map(\.state) == [.lost, .noDirect, .noDirect])

        _ = fixture.tick(at: 1.1)
        let handedOff = try Self.locate("counter", in: &fixture.core).get()
        #expect(handedOff.generation > withinGrace.generation)
        #expect(handedOff.workers.map(\.state) == [.handedOff, .noDirect, .noDirect])
        // A machine that keeps nothing does not hand off: its keys wait for their own worker.
        #expect(try Self.locate("scratch", in: &fixture.core).get().workers.map(\.state) == [.lost, .noDirect, .noDirect])
        // The client's computation from the answer is the coordinator's routing.
        let live = handedOff.workers.filter { $0.state != .handedOff }.map(\.name)
        let adopter = try #require(CoordinatorCoreHandoffTests.topology().placement(ofKey: key, among: live))
        #expect(try fixture.send(to: "counter/\(key)").get() == adopter)

        // Back: the adopted instance is being handed back, and the home is listed as such.
        fixture.register("data-1", at: 2)
        let handingBack = try Self.locate("counter", in: &fixture.core).get()
        #expect(handingBack.generation > handedOff.generation)
        #expect(handingBack.workers.map(\.state) == [.noDirect, .noDirect, .noDirect])
        #expect(handingBack.handingBack == ["data-1"])
        #expect(try Self.locate("scratch", in: &fixture.core).get().handingBack.isEmpty)

        // Released: home again, and the generation moved on once more.
        _ = fixture.released(["counter/\(key)"], by: adopter)
        let home = try Self.locate("counter", in: &fixture.core).get()
        #expect(home.handingBack.isEmpty)
        #expect(home.generation > handingBack.generation)
    }

    @Test func aLocateInABatchIsAnsweredAsItsEnvelope() throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        var bytes: [UInt8] = []
        Batch.append(WireMessage(Header(.locate, correlation: 1), address: "counter/7"), to: &bytes)
        Batch.append(WireMessage(Header(.locate, correlation: 2), address: "nothing"), to: &bytes)
        let actions = fixture.core.fromClient(Self.client, WireMessage(Header(.batch, correlation: 2), payload: bytes).frames[...])
        let replies = actions.compactMap(\.sentToClient).map(\.message)
        #expect(replies.map(\.header.correlation) == [1, 2])
        #expect(replies.map(\.header.kind) == [.location, .error])
        #expect(try payload(Location.self, of: replies[0]).machine == "counter")
    }
}

extension Result {
    /// The error, or `nil` for a success.
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
