import Foundation
@_spi(GroveInternal) import GroveWire
import Testing
import ZeroMQ

extension EndToEnd {
    /// Issue 34, left open by h34 (task h37): an instance keeps the sequences of its last 1,000
    /// clients. A second client key with `send` on the same machine sends keyed events under
    /// more than 1,000 fresh client ids of its own to one instance. Before, that pushed out the
    /// first client's sequences, and its late repeat of an event already applied was applied
    /// again. Now a key that makes client ids without end forgets only its own: the first
    /// client's repeat is answered as applied, and the count shows it applied once.
    @Suite(.timeLimit(.minutes(4)))
    struct ManyClientIdsTests {
        @Test func anotherKeysThousandClientIdsDoNotMakeAnInstanceForgetAClient() async throws {
            try await withCluster(ForgedIdempotencyKeyTests.topology) { cluster in
                let server = try RawClient.Curve.publicKey(file: cluster.keyPath("coordinator", secret: false))
                let alice = try ForgedIdempotencyKeyTests.curve(cluster, "alice", server: server)
                let mallory = try ForgedIdempotencyKeyTests.curve(cluster, "mallory", server: server)
                let endpoint = cluster.clients
                func aliceEvent(correlation: UInt64) -> WireMessage {
                    ForgedIdempotencyKeyTests.keyed("counter/m", sequence: 1, "\"increment\"", correlation: correlation)
                }
                let first = try await DirectRouteTests.request(aliceEvent(correlation: 1), at: endpoint, curve: alice)
                #expect(ForgedIdempotencyKeyTests.outcome(first) == "count 1")

                // Mallory: one event under each of 1,100 fresh client ids, 100 in flight at a
                // time, each applied (adding 0).
                let clients = 1_100, inFlight = 100
                let outcomes = try await onThread { () -> [String] in
                    let raw = try RawClient(endpoint: endpoint, curve: mallory)
                    var outcomes: [String] = []
                    for start in stride(from: 0, to: clients, by: inFlight) {
                        for index in start..<min(start + inFlight, clients) {
                            let key = IdempotencyKey(client: Array("mallory-\(index)".utf8), sequence: 1)
                            let header = Header(.event, flags: .keyed, correlation: UInt64(1_000 + index))
                            let payload = key.prefixed(Array(#"{"add":{"_0":0}}"#.utf8))
                            try raw.send(WireMessage(header, address: "counter/m", payload: payload))
                        }
                        outcomes += try raw.receiveReplies(min(inFlight, clients - start), timeout: .seconds(30))
                            .map(ForgedIdempotencyKeyTests.outcome)
                    }
                    return outcomes
                }
                #expect(outcomes.count == clients)
                #expect(outcomes.allSatisfy { $0 == "count 1" }, "\(Set(outcomes))")

                // Alice's late repeat: told as applied (its answer left with the 128 kept), not
                // applied again.
                let repeated = try await DirectRouteTests.request(aliceEvent(correlation: 2), at: endpoint, curve: alice)
                let outcome = ForgedIdempotencyKeyTests.outcome(repeated)
                #expect(outcome == "count 1" || repeated.error?.code == .alreadyApplied, "\(outcome)")
                #expect(try await cluster.state("counter/m")["count"] == .integer(1))

                // And after kill -9, from the store.
                try await cluster.killAndAwaitRestart("main")
                let afterRestart = try await DirectRouteTests.request(aliceEvent(correlation: 3), at: endpoint, curve: alice,
                                                                      timeout: .seconds(30))
                #expect(afterRestart.error?.code == .alreadyApplied, "\(ForgedIdempotencyKeyTests.outcome(afterRestart))")
                #expect(try await cluster.state("counter/m")["count"] == .integer(1))
            }
        }
    }
}
