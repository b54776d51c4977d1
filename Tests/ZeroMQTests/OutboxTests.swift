import Foundation
import Testing
@testable import ZeroMQ

@Suite(.timeLimit(.minutes(2))) struct OutboxTests {
    @Test func aSlowPeerQueuesInItsOwnOutboxAndDrainsWhenItReads() async throws {
        let peer = try SlowPeer(name: "outbox-srv")
        let (context, server, slow) = (peer.context, peer.server, peer.slow)
        defer { slow.close() }
        let fast = try LoopHarness(name: "outbox-fast", socket: makeDealer(context, id: "fast", endpoint: peer.endpoint))
        fast.send([bytes("hello")])
        #expect(await server.inbox.wait(forCount: 2))

        // Far more than the socket buffers hold, so most of it must wait in the outbox.
        let count = 200
        let payload = [UInt8](repeating: 7, count: 64 * 1024)
        server.loop.post(contentsOf: (0..<count).map { index in
            Outbound(socket: server.socket, frames: [bytes("slow"), bytes("\(index)"), payload])
        })
        server.loop.post(contentsOf: (0..<count).map { index in
            Outbound(socket: server.socket, frames: [bytes("fast"), bytes("\(index)")])
        })

        #expect(await fast.inbox.wait(forCount: count))
        let waiting = try #require(await server.ask { io in
            (total: io.pending(server.socket), slow: io.pending(server.socket, peer: bytes("slow")),
             fast: io.pending(server.socket, peer: bytes("fast")))
        })
        #expect(waiting.slow > 0)
        #expect(waiting.total == waiting.slow)
        #expect(waiting.fast == 0)

        let received = try await receiveOnThread(count, from: slow)
        #expect(received == (0..<count).map { [bytes("\($0)"), payload] })
        #expect(await server.ask { $0.pending(server.socket) } == 0)
        #expect(server.failures.items.isEmpty)
        fast.loop.stop()
        server.loop.stop()
        slow.close()
        #expect(await finishes { context.terminate() })
    }

    @Test func perPeerQueuesKeepOrderAndReportFailures() {
        var outbox = Outbox(keyedByPeer: true)
        outbox.enqueue([[1], [10]])
        outbox.enqueue([[2], [20]])
        outbox.enqueue([[1], [11]])
        #expect(outbox.count == 3)
        #expect(outbox.pending(peer: [1]) == 2)
        #expect(outbox.isBlocked(for: [[2], [99]]))
        #expect(!outbox.isBlocked(for: [[3], [99]]))

        var attempts: [[[UInt8]]] = []
        let failures = outbox.retry { frames in
            attempts.append(frames)
            if frames[0] == [2] { return .failed(ZMQError(errno: EHOSTUNREACH, operation: "send")) }
            return frames[1] == [10] ? .sent : .wouldBlock
        }

        #expect(attempts.filter { $0[0] == [1] } == [[[1], [10]], [[1], [11]]])
        #expect(failures.map(\.0) == [[[2], [20]]])
        #expect(failures.first?.1.isPeerUnreachable == true)
        #expect(outbox.count == 1)
        #expect(outbox.pending(peer: [2]) == 0)
        #expect(!outbox.isBlocked(for: [[2], [21]]))
    }

    @Test func droppingAPeerReturnsItsMessagesOldestFirst() {
        var outbox = Outbox(keyedByPeer: true)
        outbox.enqueue([[1], [10]])
        outbox.enqueue([[2], [20]])
        outbox.enqueue([[1], [11]])

        #expect(outbox.drop(peer: [1]) == [[[1], [10]], [[1], [11]]])
        #expect(outbox.drop(peer: [1]).isEmpty)
        #expect(outbox.count == 1)
    }

    @Test func eachPeersBytesAreCountedUntilTheyLeave() {
        var outbox = Outbox(keyedByPeer: true)
        outbox.enqueue([[1], [UInt8](repeating: 0, count: 100)])
        outbox.enqueue([[2], [UInt8](repeating: 0, count: 10), [0]])
        outbox.enqueue([[1], [UInt8](repeating: 0, count: 1000)])
        #expect(outbox.backlog(peer: [1]) == Backlog(messages: 2, bytes: 1102))
        #expect(outbox.backlog(peer: [2]) == Backlog(messages: 1, bytes: 12))
        #expect(outbox.backlog(peer: [3]) == .empty)
        #expect(outbox.byteCount == 1114)

        // The first of peer 1's leaves, the second waits; peer 2's fails.
        var first = true
        _ = outbox.retry { frames in
            if frames[0] == [2] { return .failed(ZMQError(errno: EHOSTUNREACH, operation: "send")) }
            defer { first = false }
            return first ? .sent : .wouldBlock
        }
        #expect(outbox.backlog(peer: [1]) == Backlog(messages: 1, bytes: 1001))
        #expect(outbox.backlog(peer: [2]) == .empty)
        #expect(outbox.byteCount == 1001)
        _ = outbox.drop(peer: [1])
        #expect(outbox.byteCount == 0)
    }

    @Test func nonRouterSocketsShareOneQueue() {
        var outbox = Outbox(keyedByPeer: false)
        outbox.enqueue([[1]])
        outbox.enqueue([[2]])

        #expect(outbox.pending(peer: [9]) == 2)
        #expect(outbox.isBlocked(for: [[3]]))
        #expect(outbox.drop(peer: []) == [[[1]], [[2]]])
        #expect(outbox.isEmpty)
    }
}
