import Foundation
@testable import GroveCluster
@testable import GroveWorker
@_spi(GroveInternal) import GroveWire
import Testing

/// A worker's direct route, its pure core (docs/DIRECT-ROUTES.md step 3): each refusal with its
/// code, the coordinator's own texts where the coordinator would have refused, `moved` with its
/// reason where only the worker can tell.
@Suite("DirectCore", .timeLimit(.minutes(2)))
struct DirectCoreTests {
    static let peer = Array("p".utf8)
    static let reader = String(repeating: "R", count: 40)
    static let sender = String(repeating: "S", count: 40)
    static let stranger = String(repeating: "X", count: 40)
    static let pool = ["data-1", "data-2"]

    static func welcome(handoff: Bool = false, epoch: UInt64? = 9, direct: Bool = true, addressBytes: Int = 64,
                        payloadBytes: Int = 1024, workerOutbox: Int = 100, workerOutboxBytes: Int = 1 << 20) -> Welcome {
        var welcome = Welcome(machines: [.init(name: "counter", type: "Counter", keyed: true, handoff: handoff ? true : nil),
                                         .init(name: "sink", type: "Sink", keyed: false)],
                              remoteIO: [], heartbeatIntervalMs: 250, heartbeatTimeoutMs: 1500, mailboxCapacity: 64, epoch: epoch)
        if direct {
            welcome.direct = DirectSettings(
                limits: .init(addressBytes: addressBytes, payloadBytes: payloadBytes, owedBytesPerClient: 1 << 16, owedBytes: 1 << 20),
                queues: .init(clientOutbox: 4, clientOutboxBytes: 1 << 20, workerOutbox: workerOutbox, workerOutboxBytes: workerOutboxBytes),
                pool: pool)
        }
        return welcome
    }

    /// data-1's core, welcomed, with a reader, a sender, and the sender suspended when asked.
    static func core(_ welcome: Welcome = welcome(), suspended: Bool = false) -> DirectCore {
        var core = DirectCore(worker: "data-1")
        core.welcomed(welcome)
        core.access(ClientTable(clients: [
            .init(key: reader, number: 1, grants: [.init(roles: ["read"], machines: ["counter*"])]),
            .init(key: sender, number: 2, grants: [.init(roles: ["send"])]),
        ], suspended: suspended ? [.init(number: 2, crashes: 2, patterns: ["Counter.add"])] : []))
        return core
    }

    /// A key placed on `worker` by the topology's hash over the pool.
    static func key(on worker: String) throws -> String {
        try #require((0..<200).map { "k\($0)" }.first { Topology.host(ofKey: $0, pool: pool, handedOff: []) == worker })
    }

    static func user(_ key: String) -> String { key + " 127.0.0.1" }

    static func refusal(_ decision: DirectCore.Decision, correlation: UInt64 = 7) throws -> WireError {
        guard case .act(let actions) = decision, actions.count == 1, case .send(let peer, let message) = actions[0] else {
            Issue.record("expected one refusal, got \(decision)")
            throw WireError(.malformedFrame, "no refusal")
        }
        #expect(peer == Self.peer && message.header.kind == .error && message.header.correlation == correlation)
        return try WireJSON.decode(WireError.self, from: message.payload)
    }

    static func event(_ address: String, _ kind: MessageKind = .event, payload: String = #""increment""#) -> WireMessage {
        WireMessage(Header(kind, correlation: 7), address: address, payload: Array(payload.utf8))
    }

    @Test func aPlacedKeyIsDeliveredUnderADirectIDNeverSpawning() throws {
        var core = Self.core()
        let here = try Self.key(on: "data-1")
        guard case .deliver(let id, let existingOnly) = core.decide(peer: Self.peer, Self.event("counter/\(here)"), userID: Gatekeeper.trustedUser) else {
            Issue.record("not delivered")
            return
        }
        #expect(CorrelationEpoch.of(id) == CorrelationEpoch.direct.value)
        #expect(existingOnly)
        let read = core.decide(peer: Self.peer, Self.event("sink", .get, payload: ""), userID: Gatekeeper.trustedUser)
        guard case .deliver(_, let readsExisting) = read else {
            Issue.record("a get of a single machine by a key with read was refused: \(read)")
            return
        }
        #expect(!readsExisting, "a single machine has no key to spawn")
        let answered = core.answered(id, kind: .state, size: 10)
        let answer = try #require(answered)
        #expect(answer.peer == Self.peer && answer.correlation == 7 && answer.replacement == nil)
        let again = core.answered(id, kind: .state, size: 10)
        #expect(again == nil, "answered once")
    }

    /// An `echo` is answered by the worker whether or not the instance is here (fsm-load's raw
    /// run on the direct road): it is not held to instances that exist, as an event is.
    @Test func anEchoToAKeyIsDeliveredWhetherOrNotItsInstanceIsHere() throws {
        var core = Self.core()
        let here = try Self.key(on: "data-1")
        guard case .deliver(_, let existingOnly) = core.decide(peer: Self.peer, Self.event("counter/\(here)", .echo, payload: "x"),
                                                                 userID: Gatekeeper.trustedUser) else {
            Issue.record("an echo to a placed key was not delivered")
            return
        }
        #expect(!existingOnly)
    }

    @Test func aKeyWithoutTheRoleIsRefusedAsTheCoordinatorRefusesIt() throws {
        var core = Self.core()
        let here = try Self.key(on: "data-1")
        let address = "counter/\(here)"
        let direct = try Self.refusal(core.decide(peer: Self.peer, Self.event(address), userID: Self.user(Self.reader)))
        let coordinators = try #require(ClientAccess.forbidden(.event, address: address,
                                                               for: .client([.init(key: "", roles: [.read], machines: ["counter*"])])))
        #expect(direct.code == .forbidden)
        #expect(direct.message == coordinators.message)
        #expect(direct.message.contains("the send role"), "\(direct.message)")
        // A send-only key may send, not stop; a key the table does not hold may do nothing.
        let stop = try Self.refusal(core.decide(peer: Self.peer, Self.event(address, .stop, payload: ""), userID: Self.user(Self.sender)))
        #expect(stop.code == .forbidden && stop.message.contains("the admin role"), "\(stop.message)")
        let stranger = try Self.refusal(core.decide(peer: Self.peer, Self.event(address), userID: Self.user(Self.stranger)))
        #expect(stranger.code == .forbidden && stranger.message.contains("not a client key of the topology"), "\(stranger.message)")
        guard case .deliver = core.decide(peer: Self.peer, Self.event(address), userID: Self.user(Self.sender)) else {
            Issue.record("a send key's event was refused")
            return
        }
    }

    @Test func aSuspendedKeysEventsAreRefusedWithTheCoordinatorsText() throws {
        var core = Self.core(suspended: true)
        let address = "counter/\(try Self.key(on: "data-1"))"
        let refused = try Self.refusal(core.decide(peer: Self.peer, Self.event(address), userID: Self.user(Self.sender)))
        #expect(refused.code == .forbidden)
        #expect(refused.message == ClientAccess.suspended(key: Self.sender, crashes: 2, patterns: ["Counter.add"], address: address).message)
        // Lifted: the next table has it no more.
        core.access(ClientTable(clients: [.init(key: Self.sender, number: 2, grants: [.init(roles: ["send"])])]))
        guard case .deliver(let id, _) = core.decide(peer: Self.peer, Self.event(address), userID: Self.user(Self.sender)) else {
            Issue.record("a lifted key was refused")
            return
        }
        // The id names the sender's number, for a crash report (DirectRequestID).
        #expect(DirectRequestID.sender(of: id) == 2)
    }

    @Test func whatTheCoordinatorAnswersIsRefusedSendingItThere() throws {
        var core = Self.core()
        for kind in MessageKind.allCases where !kind.authority.servedDirect && kind != .batch {
            let refused = try Self.refusal(core.decide(peer: Self.peer, WireMessage(Header(kind, correlation: 7), address: "counter"),
                                                       userID: Gatekeeper.trustedUser))
            #expect(refused.code == .unknownKind, "\(kind)")
            #expect(refused.message.contains("send \(kind.name) to the coordinator's clients endpoint"), "\(refused.message)")
        }
        #expect(Set(MessageKind.allCases.filter(\.authority.servedDirect)) == [.event, .get, .cancel, .stop, .restart, .echo])
    }

    @Test func movedForEachReasonTheWorkerCanTell() throws {
        // Not registered: no welcome yet, a welcome without a direct part, or the session over.
        var fresh = DirectCore(worker: "data-1")
        let here = "counter/\(try Self.key(on: "data-1"))"
        let there = "counter/\(try Self.key(on: "data-2"))"
        let refused1 = try Self.refusal(fresh.decide(peer: Self.peer, Self.event(here), userID: Gatekeeper.trustedUser))
        #expect(refused1.reason == .notRegistered)
        fresh.welcomed(Self.welcome(direct: false))
        let refused2 = try Self.refusal(fresh.decide(peer: Self.peer, Self.event(here), userID: Gatekeeper.trustedUser))
        #expect(refused2.reason == .notRegistered)
        fresh.welcomed(Self.welcome(epoch: CorrelationEpoch.direct.value))
        let refused3 = try Self.refusal(fresh.decide(peer: Self.peer, Self.event(here), userID: Gatekeeper.trustedUser))
        #expect(refused3.reason == .notRegistered)
        var ended = Self.core()
        ended.sessionEnded()
        let notRegistered = try Self.refusal(ended.decide(peer: Self.peer, Self.event(here), userID: Gatekeeper.trustedUser))
        #expect(notRegistered.code == .moved && notRegistered.message.contains("not registered"), "\(notRegistered.message)")

        // Not here: another worker's key, a machine not placed here.
        var core = Self.core()
        let notHere = try Self.refusal(core.decide(peer: Self.peer, Self.event(there), userID: Gatekeeper.trustedUser))
        #expect(notHere.code == .moved && notHere.reason == .notHere && notHere.address == there)
        #expect(notHere.message.contains("was not applied"), "\(notHere.message)")
        let refused4 = try Self.refusal(core.decide(peer: Self.peer, Self.event("auth"), userID: Gatekeeper.trustedUser))
        #expect(refused4.reason == .notHere)

        // The texts the runtime sends for what only it can see: each names its reason.
        for reason in [WireError.Reason.notSpawned, .notCommitted, .stopping] {
            let error = DirectCore.moved(reason, address: here, worker: "data-1")
            #expect(error.code == .moved && error.reason == reason && error.address == here)
            #expect(error.message.contains("data-1") && error.message.contains("resend"), "\(error.message)")
        }
    }

    @Test func handoffMovesKeysAsTheCoordinatorRoutesThem() throws {
        // data-2 handed off: its keys are placed over the live workers, here data-1 alone.
        var core = Self.core(Self.welcome(handoff: true))
        let there = "counter/\(try Self.key(on: "data-2"))"
        let refused5 = try Self.refusal(core.decide(peer: Self.peer, Self.event(there), userID: Gatekeeper.trustedUser))
        #expect(refused5.reason == .notHere)
        core.placement(PlacementView(generation: 3, handedOff: ["data-2"]))
        guard case .deliver = core.decide(peer: Self.peer, Self.event(there), userID: Gatekeeper.trustedUser) else {
            Issue.record("an adopted key was not served")
            return
        }
        // data-2 back and taking its keys home: neither serves them until the coordinator says.
        core.placement(PlacementView(generation: 4, handingBack: ["data-2"]))
        let refused6 = try Self.refusal(core.decide(peer: Self.peer, Self.event(there), userID: Gatekeeper.trustedUser))
        #expect(refused6.reason == .notHere)
        // A machine that does not hand off keeps its keys home whatever the view.
        var plain = Self.core()
        plain.placement(PlacementView(generation: 3, handedOff: ["data-2"]))
        let refused7 = try Self.refusal(plain.decide(peer: Self.peer, Self.event(there), userID: Gatekeeper.trustedUser))
        #expect(refused7.reason == .notHere)
    }

    @Test func sizesAndFormAreTheCoordinatorsChecks() throws {
        var core = Self.core(Self.welcome(addressBytes: 16, payloadBytes: 8))
        let long = try Self.refusal(core.decide(peer: Self.peer, Self.event("counter/" + String(repeating: "a", count: 20)),
                                                userID: Gatekeeper.trustedUser))
        #expect(long.message == AddressChecks.addressTooLong(28, limit: 16, correlation: 7).message)
        let large = try Self.refusal(core.decide(peer: Self.peer, Self.event("sink", payload: String(repeating: "x", count: 9)),
                                                 userID: Gatekeeper.trustedUser))
        #expect(large.message == AddressChecks.payloadTooLarge(9, limit: 8, address: "sink", answerer: "worker data-1").message)
        #expect(large.message.contains("worker data-1 accepts at most 8"), "\(large.message)")
        let decomposed = "counter/e\u{301}"
        let notNFC = try Self.refusal(core.decide(peer: Self.peer, Self.event(decomposed, payload: ""), userID: Gatekeeper.trustedUser))
        #expect(notNFC.code == AddressChecks.notNFC(decomposed, correlation: 7).code)
        #expect(notNFC.message == AddressChecks.notNFC(decomposed, correlation: 7).message)
        let control = try Self.refusal(core.decide(peer: Self.peer, Self.event("counter/a\u{7}", payload: ""), userID: Gatekeeper.trustedUser))
        #expect(control.code == .malformedFrame)
    }
}

extension DirectCoreTests {
    /// ZeroMQ never tells the worker that a client left: the clients remembered as batching are
    /// bounded, whatever the number of routing ids that ever sent a batch, and the one that just
    /// sent one is among them.
    @Test func theBatchingClientsAreBoundedHoweverManyPeersCameAndWent() {
        var core = Self.core()
        for index in 0..<(3 * DirectCore.batchingBound + 7) {
            let peer = Array("peer-\(index)-".utf8) + Array(repeating: UInt8(ascii: "R"), count: 200)
            core.noteBatch(from: peer)
            #expect(core.batching.contains(peer))
            #expect(core.batching.count <= DirectCore.batchingBound)
        }
        core.noteBatch(from: Self.peer)
        core.noteBatch(from: Self.peer)
        #expect(core.batching.contains(Self.peer))
    }
}

extension DirectCoreTests {
    /// A worker's turn sends nothing until it ends: the replies to a batch's earlier envelopes,
    /// past what ZeroMQ takes, wait for its client as surely as its outbox does, so a batch of
    /// many thousand envelopes meets the client's bound within its own message, and the rest are
    /// owed busies (kept as runs, released as the client reads), not one refusal encoded each.
    @Test func aBatchsOwnRepliesCountTowardItsClientsQueuePastWhatZeroMQTakes() throws {
        let inbound = DirectInbound(peer: Self.peer, userID: Gatekeeper.trustedUser, backlog: ClientBacklog(messages: 3, bytes: 100),
                                    frames: [], frameCount: 3)
        #expect(inbound.backlog(afterReplies: 0, madeBytes: 0) == inbound.backlog)
        #expect(inbound.backlog(afterReplies: DirectInbound.socketQueue, madeBytes: 9000) == inbound.backlog, "ZeroMQ takes these")
        #expect(inbound.backlog(afterReplies: DirectInbound.socketQueue + 500, madeBytes: 9000) == ClientBacklog(messages: 503, bytes: 9100))

        // The welcome's clientOutbox is 4: an empty queue takes the request, four replies past
        // ZeroMQ's make the next one owed (no reply now, a warning that the client fell behind).
        var core = Self.core()
        let key = try Self.key(on: "data-1")
        let empty = DirectInbound(peer: Self.peer, userID: Gatekeeper.trustedUser, backlog: .empty, frames: [], frameCount: 3)
        guard case .deliver = core.decide(peer: Self.peer, Self.event("counter/\(key)"), userID: Gatekeeper.trustedUser,
                                          backlog: empty.backlog(afterReplies: 1, madeBytes: 20)) else {
            Issue.record("the first envelope is delivered")
            return
        }
        let behind = empty.backlog(afterReplies: DirectInbound.socketQueue + 4, madeBytes: 20 * (DirectInbound.socketQueue + 4))
        let owed = core.decide(peer: Self.peer, Self.event("counter/\(key)"), userID: Gatekeeper.trustedUser, backlog: behind)
        guard case .act(let actions) = owed else {
            Issue.record("expected the request owed a busy, got \(owed)")
            return
        }
        #expect(actions.allSatisfy { if case .warn = $0 { true } else { false } }, "owed, not sent now: \(actions)")
        #expect(core.rules?.clientsOwed == [Self.peer])
    }
}
