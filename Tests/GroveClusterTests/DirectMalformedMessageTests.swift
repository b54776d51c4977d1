@testable import GroveCluster
@testable import GroveWorker
@_spi(GroveInternal) import GroveWire
import Testing
import ZeroMQ

/// A direct message that is not three frames is refused `malformed-frame` naming how many frames
/// it had, those past the socket's maximum included (076e5e6): the direct ROUTER keeps at most
/// eight frames with the routing id, so a nine-frame request reaches the runtime as seven, and
/// the refusal must still say nine, as the coordinator's does. On a ``DrivenLoop``: no socket.
@Suite(.timeLimit(.minutes(2))) struct DirectMalformedMessageTests {
    static let peer = Array("client".utf8)

    /// The refusals `worker` posted for its direct clients, each with the client it names.
    static func refusals(of worker: InMemoryWorker) throws -> [(peer: [UInt8], correlation: UInt64, error: WireError)] {
        try worker.direct!.takeReady().map { outgoing in
            guard case .named(let frames) = outgoing else {
                Issue.record("a refusal names its client: \(outgoing)")
                throw CancellationError()
            }
            try #require(frames.count == 4, "a refusal names its client: \(frames.count) frames")
            let header = try Header(frames[1])
            #expect(header.kind == .error)
            return (frames[0], header.correlation, try WireJSON.decode(WireError.self, from: frames[3]))
        }
    }

    /// What the I/O thread hands the runtime for a message of `frameCount` frames after the
    /// routing id, of which it kept `kept` (at most the socket's maximum).
    static func inbound(kept: Int, of frameCount: Int) -> DirectInbound {
        let frames = [Header(.get, correlation: 5).bytes] + Array(repeating: Array("x".utf8), count: kept - 1)
        return DirectInbound(peer: peer, userID: Gatekeeper.trustedUser, backlog: .empty, frames: frames[...], frameCount: frameCount)
    }

    @Test func aRefusalNamesTheFramesTheMessageHadNotThoseKept() throws {
        let worker = try InMemoryWorker(name: "data-1", configuration: WorkerConfiguration(), direct: true)
        defer { worker.stop() }
        worker.onLoop { $0.handleDirect([Self.inbound(kept: 7, of: 9)]) }
        let refused = try Self.refusals(of: worker)
        try #require(refused.count == 1)
        #expect(refused[0].peer == Self.peer)
        #expect(refused[0].correlation == 0, "a message that is not one request has no correlation to answer under")
        #expect(refused[0].error.code == .malformedFrame)
        #expect(refused[0].error.message.hasPrefix("a message of 9 frames; a request has three"), "\(refused[0].error.message)")
    }

    @Test func threeFramesKeptOfMoreAreRefusedAndFewerAreNamedAsTheyCame() throws {
        let worker = try InMemoryWorker(name: "data-1", configuration: WorkerConfiguration(), direct: true)
        defer { worker.stop() }
        // Three kept is not three sent: refused, not read as a request.
        worker.onLoop { $0.handleDirect([Self.inbound(kept: 3, of: 5), Self.inbound(kept: 2, of: 2)]) }
        let refused = try Self.refusals(of: worker)
        #expect(refused.map(\.error.code) == [.malformedFrame, .malformedFrame])
        #expect(refused.map { $0.error.message.prefix(20) } == ["a message of 5 frame", "a message of 2 frame"],
                "\(refused.map(\.error.message))")
    }

    @Test func aBatchWithAnAddressIsRefusedAsTheCoordinatorRefusesIt() throws {
        let worker = try InMemoryWorker(name: "data-1", configuration: WorkerConfiguration(), direct: true)
        defer { worker.stop() }
        var batch = BatchBuilder()
        for correlation in [1, 2] as [UInt64] {
            batch.append(kind: .get, flags: [], correlation: correlation, address: Array("counter/a".utf8), payload: [])
        }
        let frames = batch.frames()
        #expect(try Header(frames[0]).kind == .batch)
        let addressed = [frames[0], Array("counter/a".utf8), frames[2]]
        worker.onLoop {
            $0.handleDirect([DirectInbound(peer: Self.peer, userID: Gatekeeper.trustedUser, backlog: .empty, frames: addressed[...],
                                           frameCount: 3)])
        }
        let refused = try Self.refusals(of: worker)
        try #require(refused.count == 1)
        #expect(refused[0].error == Batch.addressRefusal(9), "the coordinator's own refusal: \(refused[0].error.message)")
    }
}
