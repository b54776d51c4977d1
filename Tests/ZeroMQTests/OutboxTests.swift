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
        let failures = outbox.retryArrays(now: .now) { frames in
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
        _ = outbox.retryArrays(now: .now) { frames in
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

    /// A peer that takes nothing is tried after pauses that double up to the longest, not at
    /// every turn; one that moves is tried at every turn; one known to read again at once.
    @Test func aQueueThatDoesNotMoveIsTriedAfterGrowingPauses() {
        var outbox = Outbox(keyedByPeer: true)
        #expect(outbox.due == .never)
        outbox.enqueue([[1], [10]])
        outbox.enqueue([[1], [11]])
        #expect(outbox.due == .nextTurn)
        let start = ContinuousClock.now
        var attempts = 0
        func retry(at offset: Duration, taking: Int = 0) {
            var left = taking
            _ = outbox.retryArrays(now: start + offset) { _ in
                attempts += 1
                guard left > 0 else { return .wouldBlock }
                left -= 1
                return .sent
            }
        }
        retry(at: .zero)
        #expect(attempts == 1)
        #expect(outbox.due == .at(start + Outbox.RetryPause.first))
        // Not due before its pause ends: no attempt at all.
        retry(at: .microseconds(500))
        #expect(attempts == 1)
        retry(at: .milliseconds(1))
        #expect(attempts == 2)
        #expect(outbox.due == .at(start + .milliseconds(3)))
        var offset = Duration.milliseconds(3)
        for _ in 0..<10 {
            retry(at: offset)
            guard case .at(let next) = outbox.due else { Issue.record("expected a pause, got \(outbox.due)"); return }
            offset = next - start
        }
        #expect(attempts == 12)
        retry(at: offset)
        #expect(outbox.due == .at(start + offset + Outbox.RetryPause.longest))
        // It moves (one left, the next would block): at every turn from now on.
        retry(at: offset + Outbox.RetryPause.longest, taking: 1)
        #expect(outbox.due == .nextTurn)
        #expect(outbox.count == 1)
        retry(at: offset + Outbox.RetryPause.longest)
        guard case .at = outbox.due else { Issue.record("expected a pause again, got \(outbox.due)"); return }
        // Its peer reads again: tried at the next turn.
        outbox.retrySoon(peer: [1])
        #expect(outbox.due == .nextTurn)
        retry(at: offset + Outbox.RetryPause.longest, taking: 1)
        #expect(outbox.isEmpty)
        #expect(outbox.due == .never)
    }

    /// A message from a peer whose queue waits out a pause makes it due at the next turn (a
    /// client that sends is usually reading): one event per message lost a fifth of its rate
    /// to queues that waited 1 ms and more for a client that had read meanwhile.
    @Test func aMessageFromAWaitingPeerEndsItsPause() {
        var outbox = Outbox(keyedByPeer: true)
        outbox.enqueue([[1], [10]])
        outbox.enqueue([[2], [20]])
        let start = ContinuousClock.now
        _ = outbox.retryArrays(now: start) { _ in .wouldBlock }
        #expect(outbox.due == .at(start + Outbox.RetryPause.first))
        outbox.retrySoon(onePeer: [3])
        #expect(outbox.due == .at(start + Outbox.RetryPause.first), "a peer nothing waits for changes nothing")
        outbox.retrySoon(onePeer: [1])
        #expect(outbox.due == .nextTurn)
        var tried: [[UInt8]] = []
        _ = outbox.retryArrays(now: start + .microseconds(10)) { frames in
            tried.append(frames[0])
            return .sent
        }
        #expect(tried == [[1]], "only the peer that sent is tried before its pause ends")
        var shared = Outbox(keyedByPeer: false)
        shared.enqueue([[9]])
        _ = shared.retryArrays(now: start) { _ in .wouldBlock }
        shared.retrySoon(onePeer: [9])
        #expect(shared.due == .at(start + Outbox.RetryPause.first), "only ROUTER queues are kept by peer")
    }

    /// A new peer's queue is tried at the next turn even while another's waits out a pause.
    @Test func aNewPeersQueueDoesNotWaitForAnothersPause() {
        var outbox = Outbox(keyedByPeer: true)
        outbox.enqueue([[1], [10]])
        let start = ContinuousClock.now
        _ = outbox.retryArrays(now: start) { _ in .wouldBlock }
        guard case .at = outbox.due else { Issue.record("expected a pause, got \(outbox.due)"); return }
        outbox.enqueue([[2], [20]])
        #expect(outbox.due == .nextTurn)
        var tried: [[UInt8]] = []
        _ = outbox.retryArrays(now: start) { frames in
            tried.append(frames[0])
            return .sent
        }
        #expect(tried == [[2]])
        #expect(outbox.pending(peer: [1]) == 1)
    }

    /// A router's borrowed message goes to its peer's queue only while something waits there;
    /// a queue that empties stays out of the way, and queued messages keep their frames, their
    /// order and their bytes across compactions of the queue's buffer.
    @Test func borrowedMessagesQueueOnlyBehindWaitingOnesAndKeepTheirFrames() {
        var outbox = Outbox(keyedByPeer: true)
        func borrowed(_ peer: [UInt8], _ index: Int, payload: Int = 3) -> Bool {
            let (header, address, body) = (bytes("h\(index)"), bytes("a"), [UInt8](repeating: UInt8(index % 251), count: payload))
            return header.withUnsafeBytes { h in address.withUnsafeBytes { a in body.withUnsafeBytes { b in
                outbox.enqueueIfWaiting(peer: peer, h, a, b)
            } } }
        }
        func queued(_ peer: [UInt8], _ index: Int, payload: Int = 3) {
            let (header, address, body) = (bytes("h\(index)"), bytes("a"), [UInt8](repeating: UInt8(index % 251), count: payload))
            header.withUnsafeBytes { h in address.withUnsafeBytes { a in body.withUnsafeBytes { b in outbox.enqueue(peer: peer, h, a, b) } } }
        }
        #expect(!borrowed([1], 0), "nothing waits: the caller sends it")
        queued([1], 0)
        #expect(outbox.due == .nextTurn)
        // Large payloads, so that the queue's buffer is compacted as its first half leaves.
        for index in 1 ..< 200 { #expect(borrowed([1], index, payload: 1000)) }
        #expect(!borrowed([2], 0), "another peer does not wait behind peer 1")
        let headers = (0 ..< 200).map { bytes("h\($0)").count }.reduce(0, +)
        let expected = 200 * (1 + 1) + headers + 3 + 199 * 1000  // peer and address, headers, payloads
        #expect(outbox.backlog(peer: [1]) == Backlog(messages: 200, bytes: expected))
        var received: [[[UInt8]]] = []
        for round in 0 ..< 4 {
            var taken = 0
            _ = outbox.retryArrays(now: .now) { frames in
                guard taken < 50 else { return .wouldBlock }
                taken += 1
                received.append(frames)
                return .sent
            }
            #expect(outbox.count == 200 - 50 * (round + 1))
        }
        #expect(outbox.isEmpty && outbox.due == .never)
        #expect(received.map { $0[1] } == (0 ..< 200).map { bytes("h\($0)") })
        #expect(received.allSatisfy { $0.count == 4 && $0[0] == [1] && $0[2] == bytes("a") })
        #expect(received[199][3] == [UInt8](repeating: 199, count: 1000))
        // Emptied, peer 1's queue no longer holds its messages back.
        #expect(!borrowed([1], 300))
        #expect(!outbox.isBlocked(forPeer: [1]))
    }

    /// Messages of any number of frames keep them; a failed one comes back whole; a dropped
    /// peer's queue comes back oldest first.
    @Test func framesOfAnyCountRoundTripAndFailuresComeBackWhole() {
        var outbox = Outbox(keyedByPeer: true)
        let long: [[UInt8]] = [[7]] + (0 ..< 12).map { [UInt8]($0 ..< $0 + 2) }
        outbox.enqueue(long)
        outbox.enqueue([[7], []])
        outbox.enqueue([[8], [1, 2, 3]])
        let failures = outbox.retryArrays(now: .now) { frames in
            frames[0] == [8] ? .failed(ZMQError(errno: EHOSTUNREACH, operation: "send")) : .wouldBlock
        }
        #expect(failures.map(\.0) == [[[8], [1, 2, 3]]])
        #expect(outbox.drop(peer: [7]) == [long, [[7], []]])
        #expect(outbox.isEmpty && outbox.byteCount == 0)
    }
}

extension Outbox {
    /// ``retry(now:_:)`` with each message's frames as arrays, for tests that compare them.
    mutating func retryArrays(now: ContinuousClock.Instant, _ attempt: ([[UInt8]]) -> SendAttempt) -> [([[UInt8]], ZMQError)] {
        retry(now: now) { attempt($0.map { Array($0) }) }
    }
}
