@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
import GroveRuntime
@_spi(GroveInternal) import GroveWire
import Testing
import ZeroMQ

/// Batches between the coordinator and its workers are bounded by count as a client's are
/// (`limits.batchEnvelopes`, told to workers by the welcome): each side refuses a larger batch
/// from its header before reading an envelope, and cuts its own batches at the bound, so what
/// it sends is never refused. A real coordinator core and worker runtime in one process.
@Suite(.timeLimit(.minutes(2)))
struct PeerBatchBoundTests {
    static let bound = 3

    static let topology = {
        var topology = Topology(
            name: "peerbatches",
            coordinator: .init(clients: "inproc://clients", workers: "inproc://workers", events: "inproc://events"),
            workers: [.init(name: "w")],
            machines: [.init(name: "tallies", type: "TallyMachine", worker: "w", keyed: true)],
            heartbeat: .init(intervalMs: 50, timeoutMs: 200)
        )
        topology.limits.batchEnvelopes = bound
        return topology
    }()

    static func increment(_ correlation: UInt64, _ address: String = "tallies/a") -> WireMessage {
        WireMessage(Header(.event, correlation: correlation), address: address, payload: Array(#""increment""#.utf8))
    }

    /// How many envelopes each message holds (1 for a lone one).
    static func envelopeCounts(_ messages: [[[UInt8]]]) throws -> [Int] {
        try messages.map { frames in
            let header = try Header(frames[0])
            return header.kind == .batch ? try Batch.envelopes(in: frames[2], count: header.correlation).count : 1
        }
    }

    static func started(_ cluster: InMemoryCluster) throws -> InMemoryWorker {
        var configuration = WorkerConfiguration()
        configuration.register(TallyMachine.self)
        let worker = try InMemoryWorker(name: "w", configuration: configuration)
        worker.start()
        try #require(cluster.settle(worker) { worker.isWelcomed }, "\(cluster.warnings)")
        #expect(worker.onLoop { $0.core.batchEnvelopes } == bound, "the welcome told the worker the bound")
        return worker
    }

    /// Four clients' batches of three events, in one turn of the coordinator, for one worker:
    /// the coordinator forwards them in batches of at most three, the worker answers in batches
    /// of at most three, and every event is answered, each exactly once.
    @Test func bothSidesCutTheirBatchesAtTheBoundAndEveryEventIsAnswered() throws {
        let cluster = InMemoryCluster(topology: Self.topology)
        let worker = try Self.started(cluster)
        let clients = ["a", "b", "c", "d"]
        cluster.loop.receive(clients.enumerated().map { index, client in
            let events = (1...3).map { Self.increment(UInt64(index * 10 + $0), "tallies/\(client)") }
            return Inbound(socket: cluster.clients, frames: [Array(client.utf8)] + InMemoryCluster.batch(events))
        })
        let toWorker = cluster.toWorker("w").map(\.frames)
        let forwarded = try Self.envelopeCounts(toWorker)
        #expect(forwarded.reduce(0, +) == 12 && forwarded.allSatisfy { $0 <= Self.bound }, "\(forwarded)")
        worker.deliver(toWorker)
        let fromWorker = worker.takeSent()
        let replies = try Self.envelopeCounts(fromWorker)
        #expect(replies.reduce(0, +) >= 12 && replies.allSatisfy { $0 <= Self.bound }, "\(replies)")
        cluster.loop.receive(fromWorker.map { Inbound(socket: cluster.workers, frames: [Array("w".utf8)] + $0) })
        for (index, client) in clients.enumerated() {
            let answers = cluster.toClient(client).unbatched
            #expect(answers.map(\.header.correlation).sorted() == (1...3).map { UInt64(index * 10 + $0) }, "\(client): \(answers)")
            #expect(answers.allSatisfy { $0.header.kind == .state }, "\(answers)")
        }
        #expect(!cluster.warnings.contains { $0.contains("refused a batch") }, "\(cluster.warnings)")
    }

    /// A worker (a peer with a worker's key) that sends a batch whose header counts more than the
    /// bound is refused whole, before any envelope is read: `oversized` to it under correlation
    /// 0, logged, none of its replies reaches a client; a header that lies about a huge count
    /// over one envelope is refused for its count. Its next batch within the bound is served.
    @Test func theCoordinatorRefusesAWorkersBatchPastTheBoundWhole() throws {
        let cluster = InMemoryCluster(topology: Self.topology)
        let worker = try Self.started(cluster)
        cluster.fromClient("c", Self.increment(1))
        let forwarded = try #require(cluster.requests(to: "w").first)
        func reply(_ count: Int) -> [WireMessage] {
            (0..<count).map { _ in
                WireMessage(Header(.state, correlation: forwarded.header.correlation), address: "tallies/a", payload: Array(#"{"count":1}"#.utf8))
            }
        }
        for (header, envelopes) in [(UInt64(4), reply(4)), (UInt64(700_000), reply(1))] {
            var bytes: [UInt8] = []
            for message in envelopes { Batch.append(message, to: &bytes) }
            cluster.fromWorker("w", WireMessage(Header(.batch, correlation: header), payload: bytes))
            let told = try #require(cluster.toWorker("w").unbatched.first { $0.header.kind == .error })
            let error = try payload(WireError.self, of: told)
            #expect(told.header.correlation == 0 && error.code == .oversized, "\(error)")
            #expect(error.message.contains("counts \(header) envelopes") && error.message.contains("accepts at most \(Self.bound)")
                    && error.message.contains("limits.batchEnvelopes"), "\(error.message)")
            #expect(cluster.toClient("c").isEmpty, "nothing of the refused batch reached the client")
        }
        #expect(cluster.warnings.contains { $0.contains("refused a batch from worker w") }, "\(cluster.warnings)")
        cluster.fromWorker("w", batch: reply(1) + [WireMessage(Header(.heartbeat), address: "w")])
        #expect(cluster.toClient("c").map(\.header.correlation) == [1], "the next batch, within the bound, is served")
        _ = worker
    }

    /// The worker holds the coordinator's batches to the same bound, from the header: one past
    /// it is dropped (logged), nothing of it applied; the next is served.
    @Test func theWorkerDropsACoordinatorBatchPastTheBoundWhole() throws {
        let cluster = InMemoryCluster(topology: Self.topology)
        let worker = try Self.started(cluster)
        let over = InMemoryCluster.batch((1...4).map { Self.increment(UInt64($0)) })
        worker.deliver([over])
        #expect(worker.takeSent().isEmpty, "nothing answered: nothing ran")
        #expect(worker.peekState(of: "tallies/a") == nil, "no instance was started")
        let within = InMemoryCluster.batch((5...7).map { Self.increment(UInt64($0)) })
        worker.deliver([within])
        #expect(try Self.envelopeCounts(worker.takeSent()).reduce(0, +) >= 3)
        #expect(worker.peekState(of: "tallies/a") == #"{"count":3}"#)
    }

    @Test func theOutboundLimitIsFullAtTheBoundOrThePreferredSize() {
        let limit = OutboundLimit(messageBytes: 1 << 24, batchEnvelopes: 2)
        var batch = BatchBuilder()
        batch.append(Self.increment(1))
        #expect(!limit.isFull(batch))
        batch.append(Self.increment(2))
        #expect(limit.isFull(batch))
        #expect(OutboundLimit(batchEnvelopes: 0).batchEnvelopes == 1, "never below one")
    }
}
