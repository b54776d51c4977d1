import Foundation
@_spi(GroveInternal) import GroveWire
import Testing

extension EndToEnd {
    /// A `get` on the direct road behind a durable machine's commit (docs/DIRECT-ROUTES.md,
    /// 5.10) is answered after that commit, with the committed state: the worker commits a turn
    /// on its loop's thread before it reads its sockets again, and a turn's replies (a `get`'s
    /// too) leave only after its commit. Sent without waiting behind events, in the events'
    /// batch or on their heels, each `get` reads a count the store holds: the worker, killed
    /// with SIGKILL the moment the answers are in, comes back with exactly that count.
    @Suite(.timeLimit(.minutes(2)))
    struct DirectCommitOrderTests {
        static let topology = TopologyFile(
            name: "directcommit", transport: .runtimeDirectory,
            workers: [.init(name: "data", direct: true)],
            machines: [.init(name: "counter", type: "Counter", worker: "data", keyed: true, durability: "state")]
        )

        @Test func aGetBehindACommitReadsWhatTheStoreHolds() async throws {
            try await withCluster(Self.topology) { cluster in
                #expect(try await cluster.send("counter/g", "increment")["count"] == .integer(1))
                let location = try await DirectRouteTests.locate("counter", at: cluster.clients)
                let endpoint = try #require(location.workers.first?.endpoint)
                let replies = try await onThread { () throws -> [WireMessage] in
                    let client = try RawClient(endpoint: endpoint)
                    // In one batch: the events' turn commits before any of its replies leaves.
                    try client.send(Batch.pack([DirectRouteTests.event("counter/g", 2), DirectRouteTests.event("counter/g", 3),
                                                DirectRouteTests.get("counter/g", 4)]))
                    // On their heels, unanswered yet: a turn of its own, after the one before it.
                    try client.send(DirectRouteTests.event("counter/g", 5))
                    try client.send(DirectRouteTests.get("counter/g", 6))
                    return try client.receiveReplies(5)
                }
                #expect(replies.map(\.header.correlation) == [2, 3, 4, 5, 6])
                #expect(replies.map(DirectRouteTests.count) == [2, 3, 3, 4, 4])

                let pid = try await cluster.workerPID("data")
                kill(pid, SIGKILL)
                try await waitUntil("data to run as a new process", timeout: .seconds(30)) {
                    (try? await cluster.workerPID("data")).map { $0 != pid } ?? false
                }
                // What each get read was in the store: the new process has it, and no more.
                let state = try await eventually("counter/g back from the store") { try? await cluster.state("counter/g") }
                #expect(state["count"] == .integer(4))
            }
        }
    }
}
