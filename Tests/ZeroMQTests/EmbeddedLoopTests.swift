import Glibc
import Testing
@testable import ZeroMQ

/// The in-memory twin of the I/O loop keeps the real loop's promises to a delegate: failures
/// reported after the callback that sent, outboxes per ROUTER peer drained in order, ticks at
/// least every interval, and a clock of its own.
@Suite(.timeLimit(.minutes(2))) struct EmbeddedLoopTests {
    /// Records what the loop tells it; answers every received message with its frames reversed.
    final class Script: IOLoopDelegate {
        var events: [String] = []
        var ticks: [ContinuousClock.Instant] = []
        let socket: SocketID
        init(socket: SocketID) { self.socket = socket }

        func received(_ batch: [Inbound], io: LoopIO) {
            for inbound in batch {
                events.append("received \(String(decoding: inbound.frames[1], as: UTF8.self))")
                io.send(inbound.socket, [inbound.frames[0], Array("re: ".utf8) + inbound.frames[1]])
            }
            events.append("returned")
        }

        func sendFailed(_ socket: SocketID, frames: [[UInt8]], error: ZMQError, io: LoopIO) {
            events.append("failed \(String(decoding: frames[0], as: UTF8.self)) \(error.isPeerUnreachable ? "unreachable" : "\(error)")")
        }

        func tick(io: LoopIO) { ticks.append(io.now) }

        func posted(_ messages: [Outbound], io: LoopIO) {
            for message in messages { io.send(message.socket, message.frames) }
        }

        func drained(_ socket: SocketID, io: LoopIO) {
            events.append("drained, \(io.pending(socket)) left")
        }
    }

    func inbound(_ socket: SocketID, _ peer: String, _ text: String) -> Inbound {
        Inbound(socket: socket, frames: [bytes(peer), bytes(text)])
    }

    @Test func aSendToAPeerThatIsGoneIsReportedAfterTheCallbackReturns() {
        let loop = EmbeddedLoop()
        let router = loop.add(.router)
        let script = Script(socket: router)
        loop.start(script)
        loop.disconnect(bytes("gone"), on: router)
        loop.receive([inbound(router, "gone", "a"), inbound(router, "here", "b")])
        #expect(script.events == ["received a", "received b", "returned", "failed gone unreachable"])
        #expect(loop.readOutbound(on: router) == [[bytes("here"), bytes("re: b")]])
        loop.reconnect(bytes("gone"), on: router)
        loop.receive([inbound(router, "gone", "c")])
        #expect(loop.readOutbound(on: router) == [[bytes("gone"), bytes("re: c")]])
    }

    @Test func aPeerThatDoesNotReadFillsItsOwnOutboxOnly() {
        let loop = EmbeddedLoop()
        let router = loop.add(.router)
        let script = Script(socket: router)
        loop.start(script)
        loop.holdBack(bytes("slow"), on: router)
        loop.receive(["1", "2", "3"].map { inbound(router, "slow", $0) } + [inbound(router, "fast", "4")])
        #expect(loop.readOutbound(on: router) == [[bytes("fast"), bytes("re: 4")]])
        #expect(loop.pending(router, peer: bytes("slow")) == 3)
        #expect(loop.pending(router, peer: bytes("fast")) == 0)
        loop.execute { io in #expect(io.pending(router, peer: bytes("slow")) == 3) }

        #expect(loop.backlog(router, peer: bytes("slow")) == Backlog(messages: 3, bytes: 3 * ("slow".count + "re: 1".count)))
        #expect(!script.events.contains { $0.hasPrefix("drained") })

        loop.release(bytes("slow"), on: router)
        #expect(loop.readOutbound(on: router) == ["1", "2", "3"].map { [bytes("slow"), bytes("re: \($0)")] })
        #expect(loop.pending(router) == 0)
        #expect(loop.backlog(router, peer: bytes("slow")) == .empty)
        #expect(script.events.last == "drained, 0 left", "the delegate hears that the slow peer read")
    }

    @Test func droppingAPeersOutboxHandsBackWhatWaited() {
        let loop = EmbeddedLoop()
        let router = loop.add(.router)
        loop.start(Script(socket: router))
        loop.holdBack(bytes("slow"), on: router)
        loop.receive([inbound(router, "slow", "1")])
        loop.execute { io in
            #expect(io.dropPending(router, peer: bytes("slow")) == [[bytes("slow"), bytes("re: 1")]])
        }
        loop.release(bytes("slow"), on: router)
        #expect(loop.readOutbound().isEmpty)
    }

    @Test func timeMovesOnlyWhenToldAndTicksComeEveryInterval() {
        let start = ContinuousClock.now
        let loop = EmbeddedLoop(tickInterval: .milliseconds(10), now: start)
        let router = loop.add(.router)
        let script = Script(socket: router)
        loop.start(script)
        loop.execute { io in #expect(io.now == start) }
        loop.advance(by: .milliseconds(35))
        #expect(script.ticks == [10, 20, 30].map { start + .milliseconds($0) })
        #expect(loop.now == start + .milliseconds(35))
        loop.advance(by: .milliseconds(5))
        #expect(script.ticks.last == start + .milliseconds(40))
        loop.tick()
        #expect(script.ticks.count == 5)
        #expect(script.ticks.last == start + .milliseconds(40))
    }

    @Test func loopIOStaysOneWordWithTwoBackends() {
        // Passed to every callback and read on every send: an enum of two class references packs
        // its case into the pointer's spare bits.
        #expect(MemoryLayout<LoopIO>.size == MemoryLayout<Int>.size)
    }

    @Test func aPublisherKeepsOneOutboxAndPostedMessagesAreSent() {
        let loop = EmbeddedLoop()
        let pub = loop.add(.pub)
        loop.start(Script(socket: pub))
        loop.holdBack([], on: pub)
        loop.post([Outbound(socket: pub, frames: [bytes("topic-a"), bytes("1")]),
                   Outbound(socket: pub, frames: [bytes("topic-b"), bytes("2")])])
        #expect(loop.pending(pub) == 2)
        loop.release([], on: pub)
        #expect(loop.readOutbound(on: pub).map { $0[0] } == [bytes("topic-a"), bytes("topic-b")])
    }
}
