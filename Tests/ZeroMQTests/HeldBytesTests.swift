import Foundation
import Testing
@testable import ZeroMQ

/// ZeroMQ counts messages, not bytes: a ROUTER with ``HeldBytes`` counts the large frames it
/// handed to libzmq until libzmq lets them go, per peer.
@Suite(.timeLimit(.minutes(2))) struct HeldBytesTests {
    /// A ROUTER counting frames over 1 KiB, and a DEALER `slow` connected to it that reads
    /// nothing ahead (its receive queue is one message), known to the ROUTER by its hello.
    static func routerAndSlowPeer() throws -> (Socket, HeldBytes, Socket) {
        let context = try ZMQContext()
        let (router, endpoint) = try makeRouter(context)
        let held = HeldBytes(threshold: 1024)
        router.heldBytes = held
        let slow = try makeDealer(context, id: "slow", endpoint: endpoint)
        try slow.setReceiveHighWaterMark(1)
        try slow.setReceiveTimeout(milliseconds: 10_000)
        #expect(try slow.send([bytes("hello")], dontWait: false))
        #expect(try router.receive(dontWait: false)?.first == bytes("slow"))
        // Each socket keeps the context alive.
        return (router, held, slow)
    }

    @Test func largeFramesToAPeerThatDoesNotReadStayCountedUntilItReads() async throws {
        let (router, held, slow) = try Self.routerAndSlowPeer()

        // Far more than the connection's buffers hold: most must stay with libzmq.
        let large = [UInt8](repeating: 7, count: 1 << 20)
        for _ in 0 ..< 16 { #expect(try router.send([bytes("slow"), bytes("header"), large], dontWait: true)) }
        // A small frame goes as before, uncounted.
        #expect(try router.send([bytes("slow"), bytes("header"), [1, 2, 3]], dontWait: true))
        #expect(held.bytes(peer: bytes("slow")) >= 8 << 20, "held \(held.bytes(peer: bytes("slow"))) bytes")
        #expect(held.bytes(peer: bytes("other")) == 0)

        let received = try await receiveOnThread(17, from: slow)
        #expect(received.count == 17)
        #expect(received.prefix(16).allSatisfy { $0 == [bytes("header"), large] })
        #expect(received.last == [bytes("header"), [1, 2, 3]])
        #expect(await eventually { held.allBytes == 0 }, "still held: \(held.allBytes) bytes")
        slow.close()
        router.close()
    }

    @Test func theBorrowedSendsCountToo() async throws {
        let (router, held, slow) = try Self.routerAndSlowPeer()

        let large = [UInt8](repeating: 9, count: 1 << 20)
        let header = bytes("header"), address = bytes("address")
        for _ in 0 ..< 8 {
            let sent = header.withUnsafeBytes { first in
                address.withUnsafeBytes { second in
                    large.withUnsafeBytes { third in
                        try? router.send(bytes("slow"), first, second, third, dontWait: true)
                    }
                }
            }
            #expect(sent == true)
        }
        let frames = [bytes("slow"), header, large]
        for _ in 0 ..< 8 {
            let sent = frames[0].withUnsafeBytes { a in
                frames[1].withUnsafeBytes { b in
                    frames[2].withUnsafeBytes { c in
                        [a, b, c].withUnsafeBufferPointer { try? router.send(borrowed: $0, dontWait: true) }
                    }
                }
            }
            #expect(sent == true)
        }
        #expect(held.bytes(peer: bytes("slow")) >= 8 << 20, "held \(held.bytes(peer: bytes("slow"))) bytes")

        let received = try await receiveOnThread(16, from: slow)
        #expect(received.count == 16)
        #expect(received.prefix(8).allSatisfy { $0 == [header, address, large] })
        #expect(received.suffix(8).allSatisfy { $0 == [header, large] })
        #expect(await eventually { held.allBytes == 0 }, "still held: \(held.allBytes) bytes")
        slow.close()
        router.close()
    }

    /// A loop's backlog for a peer counts what libzmq holds for it too, not only its outbox:
    /// the coordinator's `busy` and `reply-dropped` read it there.
    @Test func aLoopsBacklogForAPeerIncludesWhatLibzmqHolds() async throws {
        let context = try ZMQContext()
        let (router, endpoint) = try makeRouter(context)
        router.heldBytes = HeldBytes(threshold: 1024)
        let server = try LoopHarness(name: "held-backlog", socket: router)
        let slow = try makeDealer(context, id: "slow", endpoint: endpoint)
        defer { slow.close() }
        try slow.setReceiveHighWaterMark(1)
        try slow.setReceiveTimeout(milliseconds: 10_000)
        #expect(try slow.send([bytes("hello")], dontWait: false))
        #expect(await server.inbox.wait(forCount: 1))

        let large = [UInt8](repeating: 3, count: 1 << 20)
        for _ in 0 ..< 8 { server.send([bytes("slow"), bytes("header"), large]) }
        let socket = server.socket
        var waiting = Backlog.empty
        #expect(await eventually {
            waiting = Self.backlog(of: "slow", on: socket, in: server)
            return waiting.bytes >= 4 << 20
        }, "backlog \(waiting)")
        #expect(waiting.messages == 0, "ZeroMQ's queue took them all: none in the outbox")

        _ = try await receiveOnThread(8, from: slow)
        #expect(await eventually { Self.backlog(of: "slow", on: socket, in: server) == .empty })
        server.loop.stop()
    }

    static func backlog(of peer: String, on socket: SocketID, in server: LoopHarness) -> Backlog {
        let answer = Recorder<Backlog>()
        server.loop.execute { answer.append($0.backlog(socket, peer: bytes(peer))) }
        while answer.items.isEmpty { usleep(1000) }
        return answer.items[0]
    }
}
