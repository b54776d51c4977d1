import Foundation
@_spi(GroveInternal) import GroveWire
import Testing
import ZeroMQ

extension EndToEnd {
    /// A worker's direct socket against a hostile client (task h31: issues 34 and 39), real
    /// processes: what the coordinator's road bounds must stay bounded when the coordinator is not
    /// on the way.
    @Suite(.timeLimit(.minutes(3)))
    struct DirectHostileTests {
        static let topology = TopologyFile(
            name: "directhostile", transport: .runtimeDirectory,
            workers: [.init(name: "main", direct: true)],
            machines: [.init(name: "plain", type: "Counter", worker: "main", keyed: true)]
        )

        /// Envelopes in each batch: far under every limit (1.4 MB of 16 MiB), and on 076e5e6 enough
        /// for one message to hold the worker's loop past its heartbeat timeout (30,000 did it
        /// in a debug build; one 16 MiB batch, 729,441 envelopes, in a release build).
        static let envelopes = 60_000

        /// One batch of many thousand `get`s, twice: every envelope is answered exactly once (its
        /// state, or `busy` past what the client may have waiting), the worker is neither declared
        /// lost nor restarted, and another client is answered after. On 076e5e6 each envelope past
        /// the worker's bound got a refusal encoded in the same turn; the turn outlasted the
        /// heartbeat timeout, and fsm-launch killed the worker with every machine on it.
        @Test func aBatchOfManyThousandGetsNeitherStallsTheWorkerNorGoesUnanswered() async throws {
            try await withCluster(Self.topology) { cluster in
                #expect(try await cluster.send("plain/p", "increment")["count"] == .integer(1))
                let pid = try await cluster.workerPID("main")
                let location = try await DirectRouteTests.locate("plain", at: cluster.clients)
                let endpoint = try #require(location.workers.first?.endpoint, "\(location)")

                let answers = try await onThread { () throws -> [String: Int] in
                    let client = try RawClient(endpoint: endpoint)
                    var kinds: [String: Int] = [:]
                    for round in 0..<2 {
                        let first = UInt64(round * Self.envelopes + 1)
                        let gets = (first..<first + UInt64(Self.envelopes)).map { DirectRouteTests.get("plain/p", $0) }
                        try client.send(Batch.pack(gets))
                        var seen = Set<UInt64>()
                        for reply in try client.receiveReplies(Self.envelopes, timeout: .seconds(30)) {
                            guard seen.insert(reply.header.correlation).inserted, gets.indices.contains(Int(reply.header.correlation - first))
                            else { throw HarnessError("answered twice, or not asked: \(reply.header)") }
                            let kind = reply.error.map { $0.code.rawValue } ?? (DirectRouteTests.count(reply) == 1 ? "state" : "\(reply.header.kind)")
                            kinds[kind, default: 0] += 1
                        }
                    }
                    return kinds
                }
                #expect(answers.values.reduce(0, +) == 2 * Self.envelopes, "\(answers)")
                #expect(Set(answers.keys).isSubset(of: ["state", "busy"]), "\(answers)")
                #expect((answers["state"] ?? 0) > 0, "\(answers)")

                #expect(!cluster.log.contains("worker main lost"), "the worker was declared lost:\n\(cluster.log.suffix(2000))")
                #expect(try await cluster.workerPID("main") == pid, "the worker was restarted:\n\(cluster.log.suffix(2000))")
                #expect(DirectRouteTests.count(try await DirectRouteTests.request(DirectRouteTests.get("plain/p", 1), at: endpoint)) == 1)
                #expect(try await cluster.send("plain/p", "increment")["count"] == .integer(2), "the instance was kept")
            }
        }
    }
}
