import Foundation
import GroveWire
import Testing

extension EndToEnd {
    /// Issue 34 (task h34, item 2): batches from a worker are bounded by count as a client's are
    /// (`limits.batchEnvelopes`). A pyzmq peer holding worker group `edge`'s real key
    /// (``RoguePeer``) registers as edge and sends the coordinator a 14 MB batch of 700,000
    /// heartbeats (under `limits.messageBytes`, so ZeroMQ lets it in), then a header that claims
    /// 700,000 over two envelopes: each is refused whole from its header (`oversized`, naming the
    /// limit) before any envelope is read, and logged; a batch within the bound is served; the
    /// coordinator answers clients throughout and no other worker is lost. Before, every
    /// envelope was decided in the one turn that read the batch.
    @Suite(.timeLimit(.minutes(3)))
    struct WorkerBatchBoundTests {
        typealias Authority = WorkerAuthorityTests

        @Test func aWorkersBatchPastTheBoundIsRefusedWholeFromItsHeader() async throws {
            try await withCluster(Authority.topology) { cluster in
                #expect(try await cluster.send("counter/a", "increment")["count"] == .integer(1))
                try await Authority.kill("edge", in: cluster)
                let beat = RoguePeer.Step(kind: 0x22, address: "edge", payload: "")
                var huge = beat, liar = beat, within = beat
                huge.copies = 700_000
                liar.copies = 2
                liar.count = 700_000
                within.copies = 2
                let rogue = try await RoguePeer.run(cluster, mode: "worker", key: "edge", endpoint: try await cluster.workersEndpoint(),
                                                    routingID: "edge", name: "edge", machineTypes: ["Counter"],
                                                    steps: [huge, liar, within], hold: 2)
                try #require(rogue.welcomed, "\(rogue)")
                let refused = rogue.refusals(of: "counts 700000 envelopes", code: .oversized)
                #expect(refused.count == 2, "\(rogue)")
                #expect(refused.allSatisfy { $0.message.contains("accepts at most 10000") && $0.message.contains("limits.batchEnvelopes") },
                        "\(refused.map(\.message))")
                #expect(rogue.errors.count == 2, "the batch within the bound was served: \(rogue)")
                try await cluster.waitForLog("refused a batch from worker edge", count: 2)
                #expect(try await cluster.send("counter/a", "increment")["count"] == .integer(2), "the coordinator answers")
                #expect(!cluster.log.contains("worker main lost"), "\(cluster.log.suffix(2000))")
            }
        }
    }
}
