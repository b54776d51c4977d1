@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
import GroveWire
import Testing

extension CoreFixture {
    /// A message on the connection with routing id `routingID`, whose messages carry `userID`.
    mutating func fromConnection(_ routingID: String, _ message: WireMessage, userID: String? = nil,
                                 principal: Gatekeeper.Principal? = .trusted, after offset: Duration = .zero) -> [CoordinatorAction] {
        core.fromWorker(Array(routingID.utf8), message.frames[...], now: t0 + offset, principal: principal, peer: userID)
    }

    /// Worker `name`'s registration, sent on the connection `routingID`.
    mutating func register(_ name: String, on routingID: String, userID: String? = nil,
                           principal: Gatekeeper.Principal? = .trusted, after offset: Duration = .zero) -> [CoordinatorAction] {
        let payload = try! WireJSON.encode(Self.registration(name))
        return fromConnection(routingID, WireMessage(Header(.register), address: name, payload: payload), userID: userID,
                              principal: principal, after: offset)
    }
}

/// A worker's routing id is its connection's, learned at registration (issue 34): a peer that
/// connects under a worker's name, or any routing id its registered process does not hold,
/// receives nothing meant for the worker and cannot speak for it.
@Suite("CoordinatorCore: routing ids", .timeLimit(.minutes(2)))
struct CoordinatorCoreConnectionTests {
    static let edgeID = "edge#0123456789abcdef0123456789abcdef"

    func peers(_ actions: [CoordinatorAction]) -> [String] {
        actions.compactMap { if case .toPeer(let peer, _) = $0 { String(decoding: peer, as: UTF8.self) } else { nil } }
    }

    @Test func whatIsSentToAWorkerGoesToTheConnectionItRegisteredFrom() throws {
        var fixture = CoreFixture()
        fixture.register("data-1", "data-2")
        let registered = fixture.register("edge", on: Self.edgeID)
        #expect(registered.compactMap(\.sentToWorker).first?.message.header.kind == .welcome)
        let edge = try #require(fixture.core.workerNumbers["edge"])
        #expect(fixture.core.routingIDs[edge] == Array(Self.edgeID.utf8))
        #expect(fixture.core.connections[Array(Self.edgeID.utf8)]?.worker == edge)
        #expect(fixture.core.connections[Array("edge".utf8)] == nil, "the name is no connection")
    }

    @Test func aPeerUnderTheWorkersNameIsToldToRegisterAndSpeaksForNothing() throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        _ = fixture.register("edge", on: Self.edgeID)
        let forged = CoordinatorCoreAuthorityTests.stateChanged("auth", worker: "edge")
        for message in [forged, WireMessage(Header(.heartbeat), address: "edge")] {
            let actions = fixture.fromConnection("edge", message)
            #expect(peers(actions) == ["edge"], "\(actions)")
            let inert = actions.allSatisfy { $0.published == nil && $0.sentToClient == nil }
            #expect(inert, "\(actions)")
            let reply = try #require(actions.compactMap(\.sentToWorker).first?.message)
            #expect(try payload(WireError.self, of: reply).code == .unavailable)
        }
        // From the registered connection, it is edge's.
        #expect(fixture.fromConnection(Self.edgeID, forged).compactMap(\.published).count == 1)
    }

    @Test func aRegisteredConnectionWithAnotherKeyIsRefusedAndLogged() throws {
        var fixture = CoreFixture()
        fixture.register("data-1", "data-2")
        _ = fixture.register("edge", on: Self.edgeID, userID: "EDGEKEY 127.0.0.1", principal: .worker(group: "edge"))
        let forged = CoordinatorCoreAuthorityTests.stateChanged("auth", worker: "edge")
        let actions = fixture.fromConnection(Self.edgeID, forged, userID: "DATAKEY 127.0.0.1")
        let unpublished = actions.allSatisfy { $0.published == nil }
        #expect(unpublished, "\(actions)")
        let reply = try #require(actions.compactMap(\.sentToWorker).first?.message)
        let error = try payload(WireError.self, of: reply)
        #expect(error.code == .forbidden)
        #expect(error.message.contains("key DATAKEY instead of key EDGEKEY"), "\(error.message)")
        let logged = actions.contains { if case .warn(let text) = $0 { text.contains("edge keeps its registration") } else { false } }
        #expect(logged, "\(actions)")
        #expect(fixture.core.workers["edge"]?.registered == true)
        // With the key it registered with, it is edge's.
        #expect(fixture.fromConnection(Self.edgeID, forged, userID: "EDGEKEY 127.0.0.1").compactMap(\.published).count == 1)
    }

    @Test func aConnectionRegistersAsOneWorkerOnly() throws {
        var fixture = CoreFixture()
        _ = fixture.register("data-1", on: "pool#1")
        let second = fixture.register("data-2", on: "pool#1")
        let error = try payload(WireError.self, of: try #require(second.compactMap(\.sentToWorker).first).message)
        #expect(error.code == .registrationRejected && error.message.contains("registered as worker data-1 already"), "\(error.message)")
        #expect(fixture.core.workers["data-2"]?.registered == false)
    }

    @Test func aNewProcessTakesTheWorkerAndTheOldConnectionGetsNothingMore() throws {
        var fixture = CoreFixture()
        fixture.register("data-1", "data-2")
        _ = fixture.register("edge", on: "edge#old")
        let sent = try fixture.sendEvent("c", to: "auth", correlation: 1)
        let replaced = fixture.register("edge", on: "edge#new")
        #expect(replaced.contains(.dropQueued(peer: Array("edge#old".utf8))), "what waited for the old connection is dropped")
        let edge = try #require(fixture.core.workerNumbers["edge"])
        #expect(fixture.core.routingIDs[edge] == Array("edge#new".utf8))
        // The old process's reply and heartbeat count for nothing; it is told to register.
        let late = fixture.fromConnection("edge#old", WireMessage(Header(.state, correlation: sent.id), address: "auth"))
        #expect(peers(late) == ["edge#old"] && late.compactMap(\.sentToClient).isEmpty)
    }

    @Test func aLostWorkersConnectionIsForgottenAndItsProcessRegistersAgain() throws {
        var fixture = CoreFixture()
        fixture.register("data-1", "data-2")
        _ = fixture.register("edge", on: Self.edgeID)
        let lost = fixture.core.lose("edge", reason: "test", cause: .silent)
        #expect(lost.contains(.dropQueued(peer: Array(Self.edgeID.utf8))))
        #expect(fixture.core.connections.isEmpty == false && fixture.core.connections[Array(Self.edgeID.utf8)] == nil)
        let beat = fixture.fromConnection(Self.edgeID, WireMessage(Header(.heartbeat), address: "edge"))
        #expect(peers(beat) == [Self.edgeID])
        #expect(fixture.register("edge", on: Self.edgeID).compactMap(\.sentToWorker).first?.message.header.kind == .welcome)
    }

    @Test func registrationRefusalsGoToTheConnectionThatSentThem() throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        let actions = fixture.register("edge", on: "rogue#1", userID: "DATAKEY 10.0.0.9", principal: .worker(group: "data"))
        #expect(peers(actions) == ["rogue#1"])
        let toRegistered = actions.contains { if case .toWorker = $0 { true } else { false } }
        #expect(!toRegistered, "nothing goes to the registered edge")
        #expect(fixture.core.connections[Array("edge".utf8)] != nil, "edge keeps its connection")
    }

    @Test func workerRoutingIDsAreRandomPerConnectionAndStartWithTheName() {
        let first = Worker.routingID(for: "edge")
        let second = Worker.routingID(for: "edge")
        #expect(first != second)
        #expect(first.starts(with: Array("edge#".utf8)) && first.count == 5 + 32)
        #expect(Worker.routingID(for: String(repeating: "w", count: 300)).count <= 255, "ZeroMQ takes at most 255 bytes")
    }
}
