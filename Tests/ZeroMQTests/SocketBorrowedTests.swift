import Foundation
import GroveTestSupport
import Testing
@testable import ZeroMQ

/// Sending from and receiving into borrowed memory: the same messages as the array API, and
/// copies made only when a message has to wait.
/// `.ownThread`: sockets block on receive and send timeouts, contexts on terminating.
@Suite(.timeLimit(.minutes(2)), .ownThread) struct SocketBorrowedTests {
    @Test func borrowedFramesGoOutAndComeInAsTheArrayAPIsDo() throws {
        let context = try ZMQContext()
        defer { context.terminate() }
        let (router, endpoint) = try makeRouter(context)
        let dealer = try makeDealer(context, id: "client", endpoint: endpoint)
        defer { router.close(); dealer.close() }
        try router.setReceiveTimeout(milliseconds: 5_000)
        try dealer.setReceiveTimeout(milliseconds: 5_000)
        let (header, address, payload) = (bytes("header"), [UInt8](), [UInt8](repeating: 9, count: 100))

        let sent = header.withUnsafeBytes { h in address.withUnsafeBytes { a in payload.withUnsafeBytes { p in
            Result { () throws(ZMQError) -> Bool in try dealer.send(h, a, p, dontWait: false) }
        } } }
        #expect(try sent.get())
        #expect(try router.receive(dontWait: false) == [bytes("client"), header, address, payload])

        let answered = bytes("reply").withUnsafeBytes { r in address.withUnsafeBytes { a in payload.withUnsafeBytes { p in
            Result { () throws(ZMQError) -> Bool in try router.send(bytes("client"), r, a, p, dontWait: false) }
        } } }
        #expect(try answered.get())
        let received = try dealer.receive(dontWait: false) { frames, count in (frames.map { Array($0) }, count) }
        #expect(received?.0 == [bytes("reply"), address, payload])
        #expect(received?.1 == 3)
    }

    @Test func aBorrowedReceiveIsNilWhenNothingWaitsAndLendsAtMostItsLimit() throws {
        let context = try ZMQContext()
        defer { context.terminate() }
        let (router, endpoint) = try makeRouter(context)
        let dealer = try makeDealer(context, id: "many", endpoint: endpoint)
        defer { router.close(); dealer.close() }
        try router.setReceiveTimeout(milliseconds: 5_000)
        #expect(try dealer.receive(dontWait: true) { _, _ in true } == nil)

        let frames = (0..<12).map { bytes("frame \($0)") }
        #expect(try dealer.send(frames, dontWait: false))
        #expect(try dealer.send([bytes("next")], dontWait: false))
        let lent = try #require(try router.receive(dontWait: false) { frames, count in (frames.map { Array($0) }, count) })

        // The routing id and 12 frames: 13 counted, the first 8 lent, the rest dropped whole.
        #expect(lent.1 == 13)
        #expect(lent.0 == [bytes("many")] + frames.prefix(Socket.borrowedFrameLimit - 1))
        #expect(try router.receive(dontWait: false) == [bytes("many"), bytes("next")])
    }

    @Test func aBorrowedSendToAnUnknownPeerNamesIt() throws {
        let context = try ZMQContext()
        defer { context.terminate() }
        let (router, _) = try makeRouter(context)
        defer { router.close() }
        let frame = bytes("x")
        let error = #expect(throws: ZMQError.self) {
            try frame.withUnsafeBytes { raw in
                Result { () throws(ZMQError) -> Bool in try router.send(bytes("ghost"), raw, raw, raw, dontWait: true) }
            }.get()
        }
        #expect(error?.isPeerUnreachable == true)
        #expect(error?.operation.contains("\"ghost\"") == true, "\(String(describing: error))")
    }

    /// Borrowed sends alone, into an empty outbox: the first that finds no room (EAGAIN) waits
    /// as a copy, later ones queue behind it, and all arrive whole and in order.
    @Test func borrowedSendsThatFindNoRoomWaitAsCopies() async throws {
        let peer = try SlowPeer(name: "borrow-full")
        let (context, server, slow) = (peer.context, peer.server, peer.slow)
        defer { slow.close() }
        #expect(await server.inbox.wait(forCount: 1))
        let payload = [UInt8](repeating: 3, count: 64 * 1024)
        let count = 40
        let waiting = try #require(await server.ask { io in
            var waited: [Int] = []
            for index in 0..<count {
                var scratch = bytes("\(index)")
                scratch.withUnsafeBytes { number in
                    payload.withUnsafeBytes { io.send(server.socket, peer: bytes("slow"), number, UnsafeRawBufferPointer(start: nil, count: 0), $0) }
                }
                for position in scratch.indices { scratch[position] = 0 }  // what was lent is gone
                waited.append(io.pending(server.socket))
            }
            return waited
        })
        // Nothing waited at first (the socket took it), then something did: the EAGAIN branch ran.
        #expect(waiting.first == 0)
        #expect(waiting.last ?? 0 > 0)
        let received = try await receiveOnThread(count, from: slow)
        #expect(received == (0..<count).map { [bytes("\($0)"), [], payload] })
        server.loop.stop()
        slow.close()
        #expect(await finishes { context.terminate() })
    }

    /// A borrowed send that fails for good (an unknown peer under ROUTER_MANDATORY) reaches the
    /// delegate with copies of its frames.
    @Test func aFailedBorrowedSendIsReportedWithItsFrames() async throws {
        let context = try ZMQContext()
        let (router, _) = try makeRouter(context)
        let server = try LoopHarness(name: "borrow-fail", socket: router)
        let frame = bytes("lent")
        _ = await server.ask { io in
            frame.withUnsafeBytes { io.send(server.socket, peer: bytes("ghost"), $0, $0, $0) }
        }
        #expect(await server.failures.wait(forCount: 1))
        let failure = try #require(server.failures.items.first)
        #expect(failure.frames == [bytes("ghost"), frame, frame, frame])
        #expect(failure.error.isPeerUnreachable)
        server.loop.stop()
        #expect(await finishes { context.terminate() })
    }

    /// Messages sent from borrowed memory to a slow peer wait in its outbox as copies, behind
    /// what was already waiting, and arrive whole and in order.
    @Test func borrowedSendsToASlowPeerQueueAsCopiesInOrder() async throws {
        let peer = try SlowPeer(name: "borrow-srv")
        let (context, server, slow) = (peer.context, peer.server, peer.slow)
        defer { slow.close() }
        #expect(await server.inbox.wait(forCount: 1))

        let count = 100
        let payload = [UInt8](repeating: 7, count: 64 * 1024)
        // Half through the array API, half from borrowed memory that is gone once the call returns.
        server.loop.post(contentsOf: (0..<count / 2).map { index in
            Outbound(socket: server.socket, frames: [bytes("slow"), bytes("\(index)"), [], payload])
        })
        let waiting = try #require(await server.ask { io in
            for index in count / 2 ..< count {
                var scratch = bytes("\(index)") + payload
                scratch.withUnsafeBytes { raw in
                    let number = UnsafeRawBufferPointer(rebasing: raw[0 ..< raw.count - payload.count])
                    io.send(server.socket, peer: bytes("slow"), number, UnsafeRawBufferPointer(start: nil, count: 0),
                            UnsafeRawBufferPointer(rebasing: raw[number.count...]))
                }
                for position in scratch.indices { scratch[position] = 0 }  // what was lent is gone
            }
            return io.pending(server.socket, peer: bytes("slow"))
        })
        #expect(waiting > 0)

        let received = try await receiveOnThread(count, from: slow)
        #expect(received == (0..<count).map { [bytes("\($0)"), [], payload] })
        #expect(await server.ask { $0.pending(server.socket) } == 0)
        #expect(server.failures.items.isEmpty)
        server.loop.stop()
        slow.close()
        #expect(await finishes { context.terminate() })
    }
}
