import Foundation
@testable import GroveCluster
@testable import GroveWorker
@_spi(GroveInternal) import GroveWire
import Testing

/// A worker's direct route and a client that does not read (docs/DIRECT-ROUTES.md 2.3): the
/// coordinator's rules (``ClientRules``) held by the worker: busies owed as runs and released in
/// order once the client's queue drains, `reply-dropped` for a reply too large for what waits,
/// and the worker's own bound on the direct requests it holds, half of it for such a client.
@Suite("DirectCore: clients that do not read", .timeLimit(.minutes(2)))
struct DirectCoreClientLimitTests {
    static let peer = DirectCoreTests.peer
    static let other = Array("q".utf8)

    static func event(_ address: String, correlation: UInt64) -> WireMessage {
        WireMessage(Header(.event, correlation: correlation), address: address, payload: Array(#""increment""#.utf8))
    }

    @Test func busiesAreOwedAsARunAndReleasedInOrderOnceTheQueueDrains() throws {
        var core = DirectCoreTests.core()
        let address = "counter/\(try DirectCoreTests.key(on: "data-1"))"
        // clientOutbox is 4: with four replies waiting unread, each request is owed a busy.
        let full = ClientBacklog(messages: 4, bytes: 400)
        var warnings: [String] = []
        for correlation in UInt64(10)..<13 {
            guard case .act(let actions) = core.decide(peer: Self.peer, Self.event(address, correlation: correlation),
                                                       userID: Gatekeeper.trustedUser, backlog: full) else {
                Issue.record("a request past the client's queue was delivered")
                return
            }
            warnings += actions.compactMap { if case .warn(let line) = $0 { line } else { nil } }
            #expect(!actions.contains { if case .send = $0 { true } else { false } }, "owed, not sent: the client does not read")
        }
        #expect(warnings.count == 1 && warnings[0].contains("not reading its replies"), "\(warnings)")
        // Another client is served meanwhile.
        guard case .deliver = core.decide(peer: Self.other, Self.event(address, correlation: 1), userID: Gatekeeper.trustedUser) else {
            Issue.record("another client was refused")
            return
        }
        // Drained to two waiting: two busies fit, in order; the third on the next drain.
        let first = core.drained(Self.peer, backlog: ClientBacklog(messages: 2, bytes: 200))
        let sent = first.compactMap { if case .send(_, let message) = $0 { message } else { nil } }
        #expect(sent.map(\.header.correlation) == [10, 11])
        #expect(try sent.allSatisfy { try WireJSON.decode(WireError.self, from: $0.payload).code == .busy })
        // The busy names who holds the replies: the worker, not the coordinator.
        let busy = try WireJSON.decode(WireError.self, from: sent[0].payload)
        #expect(busy.message.contains("waiting unread at worker data-1"), "\(busy.message)")
        #expect(first.contains(.countedBusies(2)))
        let rest = core.drained(Self.peer, backlog: .empty).compactMap { if case .send(_, let message) = $0 { message } else { nil } }
        #expect(rest.map(\.header.correlation) == [12])
        #expect(core.drained(Self.peer, backlog: .empty).isEmpty)
    }

    @Test func aReplyTooLargeForWhatWaitsIsDroppedAndSaidSo() throws {
        var core = DirectCoreTests.core()
        guard case .deliver(let id, _) = core.decide(peer: Self.peer, WireMessage(Header(.get, correlation: 5), address: "sink"),
                                                     userID: Gatekeeper.trustedUser) else {
            Issue.record("not delivered")
            return
        }
        let answered = core.answered(id, kind: .state, size: 1 << 20, backlog: ClientBacklog(messages: 1, bytes: 100))
        let answer = try #require(answered)
        let replacement = try #require(answer.replacement)
        #expect(replacement.header.correlation == 5)
        #expect(try WireJSON.decode(WireError.self, from: replacement.payload).code == .replyDropped)
        #expect(answer.warning != nil)
    }

    @Test func theWorkerHoldsAtMostItsQueueAndHalfForAClientThatDoesNotRead() throws {
        var core = DirectCoreTests.core(DirectCoreTests.welcome(workerOutbox: 4))
        let address = "counter/\(try DirectCoreTests.key(on: "data-1"))"
        var ids: [UInt64] = []
        // A client with one reply waiting: half of four.
        let slow = ClientBacklog(messages: 1, bytes: 10)
        for correlation in UInt64(1)...2 {
            guard case .deliver(let id, _) = core.decide(peer: Self.peer, Self.event(address, correlation: correlation),
                                                         userID: Gatekeeper.trustedUser, backlog: slow) else {
                Issue.record("request \(correlation) was refused")
                return
            }
            ids.append(id)
        }
        let half = try DirectCoreTests.refusal(core.decide(peer: Self.peer, Self.event(address, correlation: 7),
                                                           userID: Gatekeeper.trustedUser, backlog: slow))
        #expect(half.code == .busy && half.message.contains("at most half"), "\(half.message)")
        // A client that reads gets the rest, then busy naming the queue.
        for correlation in UInt64(3)...4 {
            guard case .deliver(let id, _) = core.decide(peer: Self.other, Self.event(address, correlation: correlation),
                                                         userID: Gatekeeper.trustedUser) else {
                Issue.record("request \(correlation) was refused")
                return
            }
            ids.append(id)
        }
        guard case .act(let actions) = core.decide(peer: Self.other, Self.event(address, correlation: 9), userID: Gatekeeper.trustedUser),
              case .send(_, let message) = actions.first else {
            Issue.record("a fifth request was delivered")
            return
        }
        let full = try WireJSON.decode(WireError.self, from: message.payload)
        #expect(full.code == .busy && full.message.contains("queues.workerOutbox"), "\(full.message)")
        // Answered: room again.
        _ = core.answered(ids[0], kind: .state, size: 10)
        guard case .deliver = core.decide(peer: Self.other, Self.event(address, correlation: 10), userID: Gatekeeper.trustedUser) else {
            Issue.record("refused after an answer made room")
            return
        }
    }
}
