@testable import GroveCluster
@testable import GroveWorker
@_spi(GroveInternal) import GroveWire
import Testing
import ZeroMQ

/// Direct replies go back as the coordinator's do (docs/DIRECT-ROUTES.md, 2.2): a client that
/// sent a batch gets what a turn has for it as batch messages, a client that never did gets plain
/// messages, each in order, and only once the turn's commit is done. And once the worker begins a
/// graceful stop, requests are `moved` `stopping`. No socket: a ``DrivenLoop`` and the route's
/// own functions.
@Suite(.timeLimit(.minutes(2))) struct DirectRouteBatchTests {
    static let batcher = Array("b".utf8)
    static let loner = Array("l".utf8)

    static func state(_ count: Int) -> [UInt8] { Array(#"{"count":\#(count)}"#.utf8) }

    /// The envelopes of one message's frames (routing id first): a batch's, or a plain message as one.
    static func envelopes(_ message: [[UInt8]]) throws -> [(kind: MessageKind, correlation: UInt64, address: String, payload: [UInt8])] {
        let header = try Header(message[1])
        guard header.kind == .batch else { return [(header.kind, header.correlation, String(decoding: message[2], as: UTF8.self), message[3])] }
        #expect(message[2].isEmpty, "a batch's address frame is empty")
        return try Batch.envelopes(in: message[3], count: header.correlation).map { envelope in
            (envelope.kind, envelope.correlation, String(decoding: message[3][envelope.address], as: UTF8.self), Array(message[3][envelope.payload]))
        }
    }

    @Test func aClientThatBatchesGetsOneBatchAndOneThatDoesNotGetsPlainMessages() throws {
        var replies = DirectReplies()
        for index in 1...3 {
            let held = replies.add(to: Self.batcher, batching: true, .state, flags: [], correlation: UInt64(index),
                                   address: Array("counter/a".utf8), payload: Self.state(index))
            #expect(held == nil, "held until the hand-off ends")
            let added = replies.add(to: Self.loner, batching: false, .accepted, flags: [], correlation: UInt64(10 + index),
                                    address: Array("counter/b".utf8), payload: [])
            let lone = try #require(added)
            #expect(lone[0] == Self.loner)
            #expect(try Header(lone[1]) == Header(.accepted, correlation: UInt64(10 + index)))
        }
        let finished = replies.finish()
        #expect(finished.count == 1)
        #expect(finished[0][0] == Self.batcher)
        let batch = try Self.envelopes(finished[0])
        #expect(batch.map(\.correlation) == [1, 2, 3], "in the order the replies came")
        #expect(batch.map(\.payload) == [Self.state(1), Self.state(2), Self.state(3)])
        #expect(replies.finish().isEmpty, "a finished hand-off holds nothing")
    }

    @Test func aBatchOfOneGoesAsAPlainMessageAndClientsKeepTheirOwnBatches() throws {
        var replies = DirectReplies()
        _ = replies.add(to: Self.batcher, batching: true, .state, flags: [], correlation: 1, address: Array("counter/a".utf8),
                        payload: Self.state(1))
        _ = replies.add(to: Self.loner, batching: true, .state, flags: [], correlation: 2, address: Array("counter/b".utf8),
                        payload: Self.state(2))
        _ = replies.add(to: Self.loner, batching: true, .state, flags: [], correlation: 3, address: Array("counter/b".utf8),
                        payload: Self.state(3))
        let finished = replies.finish()
        #expect(finished.map { $0[0] } == [Self.batcher, Self.loner])
        #expect(try Header(finished[0][1]) == Header(.state, correlation: 1), "one reply: a plain message")
        #expect(try Self.envelopes(finished[1]).map(\.correlation) == [2, 3])
    }

    @Test func interleavedRepliesGoToTheirOwnClientsBatchesInOrder() throws {
        var replies = DirectReplies()
        let plain = Array("p".utf8)
        var sent: [DirectReplies.Message] = []
        for (correlation, peer, batching) in [(1, Self.batcher, true), (2, Self.loner, true), (3, plain, false), (4, Self.batcher, true),
                                              (5, plain, false), (6, Self.loner, true), (7, Self.batcher, true)] {
            // A copy of the routing id, as a later message from the same client brings.
            if let message = replies.add(to: Array(peer), batching: batching, .state, flags: [], correlation: UInt64(correlation),
                                         address: Array("counter/a".utf8), payload: Self.state(correlation)) {
                sent.append(message)
            }
        }
        #expect(sent.map { $0[0] } == [plain, plain], "a client that does not batch gets each reply at once")
        #expect(try sent.map { try Header($0[1]).correlation } == [3, 5])
        let finished = replies.finish()
        #expect(finished.map { $0[0] } == [Self.batcher, Self.loner], "in the order of their first reply")
        #expect(try Self.envelopes(finished[0]).map(\.correlation) == [1, 4, 7])
        #expect(try Self.envelopes(finished[1]).map(\.correlation) == [2, 6])
        #expect(replies.finish().isEmpty, "nothing left after a finish")
    }

    @Test func aBatchLeavesOnceItReachesThePreferredSize() throws {
        var replies = DirectReplies()
        let big = [UInt8](repeating: 0x61, count: BatchBuilder.preferredByteCount / 3)
        var sent: [[[UInt8]]] = []
        for index in 1...5 {
            if let message = replies.add(to: Self.batcher, batching: true, .state, flags: [], correlation: UInt64(index),
                                         address: Array("counter/a".utf8), payload: big) {
                sent.append(message)
            }
        }
        #expect(sent.count == 1, "three envelopes of a third of the size each (and their headers) pass it once")
        #expect(try Self.envelopes(sent[0]).map(\.correlation) == [1, 2, 3])
        let rest = replies.finish()
        #expect(rest.count == 1)
        #expect(try rest.flatMap(Self.envelopes).map(\.correlation) == [4, 5])
    }

    /// A route for data-1 (``DirectCoreTests/welcome``), welcomed.
    static func route(_ loop: DrivenLoop) -> DirectRoute {
        let route = DirectRoute(worker: "data-1", endpoint: "ipc:///run/t/direct/data-1.1", socket: 7, loop: .driven(loop), curve: false)
        route.welcomed(DirectCoreTests.welcome())
        return route
    }

    static func deliver(_ route: DirectRoute, from peer: [UInt8], correlation: UInt64) throws -> UInt64 {
        let decision = route.decide(peer: peer, Header(.get, correlation: correlation), address: "sink", payloadCount: 0,
                                    userID: Gatekeeper.trustedUser, backlog: .empty)
        guard case .deliver(let id, _) = decision else {
            Issue.record("not delivered: \(decision)")
            throw WireError(.malformedFrame, "not delivered")
        }
        return id
    }

    @Test func aTurnsRepliesLeaveAfterItsCommitBatchedPerClientUnderTheirCorrelations() throws {
        let loop = DrivenLoop()
        let route = Self.route(loop)
        let link = WorkerLink(worker: "data-1", loop: .driven(loop), socket: 0, direct: route)
        let turn = Turn(outbound: link.outbound, direct: link.direct)
        route.noteBatch(from: Self.batcher)
        let batched = try (1...3).map { try Self.deliver(route, from: Self.batcher, correlation: UInt64(100 + $0)) }
        let lone = try (1...2).map { try Self.deliver(route, from: Self.loner, correlation: UInt64(200 + $0)) }
        turn.begin(collectingWoken: false)
        for (index, id) in zip(batched, lone + [0]).flatMap({ [$0.0, $0.1] }).enumerated() where id != 0 {
            link.send(.state, correlation: id, address: "sink", payload: Self.state(index))
        }
        // A refusal made in the turn (the core answered it: the client is named) joins the batch in order.
        route.refuse(Self.batcher, WireError(.unknownKind, "no"), correlation: 104)
        #expect(!loop.hasPosted, "held until the turn ends (after its commit)")
        link.flush()
        #expect(loop.takePosted().map(\.socket) == [7], "one wake-up")
        let posted = route.takeReady()
        #expect(posted.count == 6)
        let (messages, warnings) = route.replies(to: posted) { _ in .empty }
        #expect(warnings.isEmpty)
        #expect(messages.map { $0[0] } == [Self.loner, Self.loner, Self.batcher], "lone replies at once, the batch at the end")
        #expect(try messages[0 ..< 2].flatMap(Self.envelopes).map(\.correlation) == [201, 202])
        let batch = try Self.envelopes(messages[2])
        #expect(batch.map(\.correlation) == [101, 102, 103, 104])
        #expect(batch.map(\.kind) == [.state, .state, .state, .error])
        // Answered: the ids are free, a second hand-off of the same replies sends nothing.
        #expect(route.replies(to: Array(posted.prefix(5))) { _ in .empty }.messages.isEmpty)
    }

    @Test func aLargeReplyIsJudgedWithTheBatchBuiltForItsClient() throws {
        let loop = DrivenLoop()
        let route = Self.route(loop)
        route.noteBatch(from: Self.batcher)
        let first = try Self.deliver(route, from: Self.batcher, correlation: 1)
        let second = try Self.deliver(route, from: Self.batcher, correlation: 2)
        // The welcome's clientOutboxBytes is 1 MiB: two replies of 600 KiB do not both fit once
        // something waits in the outbox, the first counted as it is built.
        let large = [UInt8](repeating: 0x61, count: 600 << 10)
        let posted = [first, second].map { id in DirectRoute.Outgoing.reply(.state, flags: [], id: id, address: "sink", payload: large) }
        let (messages, warnings) = route.replies(to: posted) { _ in ClientBacklog(messages: 1, bytes: 10) }
        #expect(warnings.count == 1)
        let batch = try Self.envelopes(try #require(messages.first))
        #expect(batch.map(\.correlation) == [1, 2])
        #expect(batch.map(\.kind) == [.state, .error])
        #expect(try WireJSON.decode(WireError.self, from: batch[1].payload).code == .replyDropped)
    }

    @Test func aClientThatGoesAwayIsNoLongerBatching() {
        var core = DirectCoreTests.core()
        core.noteBatch(from: Self.batcher)
        #expect(core.batching == [Self.batcher])
        core.forget(Self.batcher)
        #expect(core.batching.isEmpty)
    }

    @Test func onceStoppingEveryRequestIsMovedStoppingAndWhatWasDeliveredIsStillAnswered() throws {
        var core = DirectCoreTests.core()
        guard case .deliver(let id, _) = core.decide(peer: DirectCoreTests.peer, DirectCoreTests.event("sink", .get, payload: ""),
                                                    userID: Gatekeeper.trustedUser) else {
            Issue.record("not delivered before the stop")
            return
        }
        core.beginStopping()
        let refused = try DirectCoreTests.refusal(core.decide(peer: DirectCoreTests.peer, DirectCoreTests.event("sink", .get, payload: ""),
                                                              userID: Gatekeeper.trustedUser))
        #expect(refused.code == .moved && refused.reason == .stopping, "\(refused.message)")
        #expect(refused.message.contains("shutting down"))
        // A welcome that comes after (a late one) does not open the route again.
        core.welcomed(DirectCoreTests.welcome())
        let again = try DirectCoreTests.refusal(core.decide(peer: DirectCoreTests.peer, DirectCoreTests.event("sink", .get, payload: ""),
                                                            userID: Gatekeeper.trustedUser))
        #expect(again.reason == .stopping)
        #expect(core.answered(id, kind: .state, size: 10)?.correlation == 7, "delivered before the stop: answered")
    }
}
