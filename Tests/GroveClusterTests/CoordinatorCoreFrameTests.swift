import Foundation
@testable import GroveCoordinator
import GroveWire
import Testing

/// What the attacker's review of issue 34 found the coordinator let by in a message's frames:
/// each is refused `malformed-frame`, saying which frame and what was wrong, and nothing of the
/// message goes on.
@Suite("CoordinatorCore: frames", .timeLimit(.minutes(2)))
struct CoordinatorCoreFrameTests {
    /// A ROUTER socket keeps the first frames of a message (eight with the routing id) and
    /// drops the rest unread: the refusal gives the count the message had, not the count kept.
    @Test func aMessageOfTenFramesIsAnsweredWithTenNotTheFramesKept() throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        let kept = [Header(.event, correlation: 5).bytes] + Array(repeating: [UInt8](), count: 6)
        let client = fixture.core.fromClient(Array("A".utf8), kept[...], frameCount: 10)
        let error = try errorReply(in: client, to: "A", correlation: 5)
        #expect(error.code == .malformedFrame)
        #expect(error.message.contains("has 10 frames"), "\(error.message)")

        let worker = fixture.core.fromWorker(Array("edge".utf8), kept[...], now: fixture.t0, frameCount: 10)
        let reply = try #require(worker.first?.sentToWorker)
        let workerError = try payload(WireError.self, of: reply.message)
        #expect(workerError.code == .malformedFrame)
        #expect(workerError.message.contains("has 10 frames"), "\(workerError.message)")
        #expect(fixture.core.pending.isEmpty)
    }

    /// Three frames kept of a message that had more are still refused (the socket's cap is not
    /// the protocol's three).
    @Test func threeFramesKeptOfMoreAreRefused() throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        let frames = [Header(.event, correlation: 8).bytes, Array("counter/k".utf8), Array(#""increment""#.utf8)]
        let error = try errorReply(in: fixture.core.fromClient(Array("A".utf8), frames[...], frameCount: 4), to: "A", correlation: 8)
        #expect(error.message.contains("has 4 frames"), "\(error.message)")
        #expect(fixture.core.pending.isEmpty)
    }

    /// Bit 0x80 was kept and ignored. A flag says how to read the payload, so an unknown one is
    /// refused, as other malformed headers are, with the request's correlation.
    @Test(arguments: [0x80, 0x20, 0x40] as [UInt8])
    func anUndefinedHeaderFlagIsRefused(bit: UInt8) throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        var header = Header(.event, correlation: 11).bytes
        header[3] = bit
        let actions = fixture.fromClient("A", frames: [header, Array("counter/k".utf8), Array(#""increment""#.utf8)])
        let error = try errorReply(in: actions, to: "A", correlation: 11)
        #expect(error.code == .malformedFrame)
        #expect(error.message.contains("the header (frame 0) sets flag bits 0x\(String(bit, radix: 16))"), "\(error.message)")
        #expect(fixture.core.pending.isEmpty)

        let fromWorker = fixture.fromWorker("edge", frames: [header, Array("counter/k".utf8), []])
        let reply = try #require(fromWorker.first?.sentToWorker)
        #expect(try payload(WireError.self, of: reply.message).code == .malformedFrame)
    }

    /// An envelope's flags are read as a header's.
    @Test func aBatchEnvelopeWithAnUndefinedFlagRefusesTheBatch() throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        var batch = CoordinatorCoreBatchTests.batch(count: 2, [CoordinatorCoreBatchTests.event(1), CoordinatorCoreBatchTests.event(2)])
        batch.payload[1] = 0x80 // the first envelope's flags
        let error = try errorReply(in: fixture.fromClient("A", batch), to: "A", correlation: 0)
        #expect(error.code == .malformedFrame)
        #expect(error.message.contains("batch envelope 1 sets flag bits 0x80"), "\(error.message)")
        #expect(fixture.core.pending.isEmpty)
    }

    /// A batch's address frame was ignored: each envelope carries its own address, so one there
    /// is refused rather than left for the sender to think its envelopes went to it.
    @Test func aBatchWithAnAddressFrameIsRefusedAsAWhole() throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        let batch = CoordinatorCoreBatchTests.batch(count: 2, [CoordinatorCoreBatchTests.event(1), CoordinatorCoreBatchTests.event(2)])
        var frames = batch.frames
        frames[1] = Array("counter/x".utf8)
        let error = try errorReply(in: fixture.fromClient("A", frames: frames), to: "A", correlation: 0)
        #expect(error.code == .malformedFrame)
        #expect(error.message.contains("a batch's address frame (frame 1) must be empty"), "\(error.message)")
        #expect(fixture.core.pending.isEmpty)
        #expect(!fixture.core.batchingClients.contains(Array("A".utf8)))

        let fromWorker = fixture.fromWorker("edge", frames: frames)
        let reply = try #require(fromWorker.first?.sentToWorker)
        #expect(try payload(WireError.self, of: reply.message).message.contains("frame 1"))
    }
}
