import Foundation
@_spi(GroveInternal) import GroveWire
import Testing
import ZeroMQ

extension EndToEnd {
    /// Issue 34, found by the attacker review of issue 37's keys (task h34): a second client key
    /// with `send` on the same machine that learns another client's id (16 random bytes, here 32)
    /// sends its own event under that id and sequence first. Before, the worker kept keys by
    /// (client id, sequence) alone, so the real client's event was answered with the forger's
    /// answer and never applied. Now each key is kept under its sender's key: the real event is
    /// applied once, each sender's repeats get its own answer, on the coordinator's road and the
    /// direct one, across a move between them, and after kill -9 from the store.
    @Suite(.timeLimit(.minutes(3)))
    struct ForgedIdempotencyKeyTests {
        static let topology = TopologyFile(
            name: "forgedkeys", transport: .tcp,
            workers: [.init(name: "main", direct: true)],
            machines: [.init(name: "counter", type: "Counter", worker: "main", keyed: true, durability: "state")],
            security: """
                { "coordinatorKey": "keys/coordinator.key_secret",
                  "clients": [ { "key": "keys/ops.key", "roles": ["read", "send", "admin"] },
                               { "key": "keys/alice.key", "roles": ["read", "send"], "machines": ["counter*"] },
                               { "key": "keys/mallory.key", "roles": ["read", "send"], "machines": ["counter*"] } ] }
                """,
            keyPairs: ["coordinator", "ops", "alice", "mallory"],
            clientKey: "ops"
        )

        /// Alice's client id: 32 bytes, so that bound to her key it is longer than a client may
        /// send (72 bytes), and the store must give it back as kept.
        static let aliceClient = Array((0..<32).map { UInt8($0 &* 7 &+ 3) })

        static func keyed(_ address: String, sequence: UInt64, _ event: String, correlation: UInt64) -> WireMessage {
            WireMessage(Header(.event, flags: .keyed, correlation: correlation), address: address,
                        payload: IdempotencyKey(client: aliceClient, sequence: sequence).prefixed(Array(event.utf8)))
        }

        /// The `count` a reply reports, or what it is instead.
        static func outcome(_ reply: WireMessage) -> String {
            DirectRouteTests.count(reply).map { "count \($0)" } ?? "\(reply.header.kind) \(reply.error.map { "\($0.code.rawValue): \($0.message)" } ?? "")"
        }

        static func curve(_ cluster: Cluster, _ name: String, server: CurveKey) throws -> RawClient.Curve {
            RawClient.Curve(server: server, keys: try RawClient.Curve.keyPair(file: cluster.keyPath(name, secret: true)))
        }

        @Test func aForgedIdAndSequenceThroughTheCoordinatorNeitherAnswersNorStopsTheRealEvent() async throws {
            try await withCluster(Self.topology) { cluster in
                let server = try RawClient.Curve.publicKey(file: cluster.keyPath("coordinator", secret: false))
                let alice = try Self.curve(cluster, "alice", server: server), mallory = try Self.curve(cluster, "mallory", server: server)
                let endpoint = cluster.clients
                func send(_ message: WireMessage, as curve: RawClient.Curve) async throws -> String {
                    Self.outcome(try await DirectRouteTests.request(message, at: endpoint, curve: curve, timeout: .seconds(30)))
                }
                // Mallory goes first, under Alice's id and next sequence.
                #expect(try await send(Self.keyed("counter/c", sequence: 1, #"{"add":{"_0":100}}"#, correlation: 1), as: mallory) == "count 100")
                // Alice's own event is applied (not answered 100, nor already-applied), once.
                #expect(try await send(Self.keyed("counter/c", sequence: 1, "\"increment\"", correlation: 2), as: alice) == "count 101")
                #expect(try await send(Self.keyed("counter/c", sequence: 1, "\"increment\"", correlation: 3), as: alice) == "count 101")
                #expect(try await send(Self.keyed("counter/c", sequence: 1, #"{"add":{"_0":100}}"#, correlation: 4), as: mallory) == "count 100")
                #expect(try await cluster.state("counter/c")["count"] == .integer(101))

                // After kill -9 the kept keys come back from the store with their senders.
                try await cluster.killAndAwaitRestart("main")
                #expect(try await send(Self.keyed("counter/c", sequence: 1, "\"increment\"", correlation: 5), as: alice) == "count 101")
                #expect(try await send(Self.keyed("counter/c", sequence: 1, #"{"add":{"_0":100}}"#, correlation: 6), as: mallory) == "count 100")
                #expect(try await send(Self.keyed("counter/c", sequence: 2, "\"increment\"", correlation: 7), as: alice) == "count 102")
                #expect(try await cluster.state("counter/c")["count"] == .integer(102))
            }
        }

        /// The same on the worker's direct socket, which binds keys to the connection's key as the
        /// coordinator does: a retry that moves from the direct road to the coordinator's (as
        /// `fsm-load --retry` and the `Client` do) is still Alice's, and gets her first answer.
        @Test func aForgedIdAndSequenceOnTheDirectRoadNeitherAnswersNorStopsTheRealEvent() async throws {
            try await withCluster(Self.topology) { cluster in
                // A direct event never starts an instance: the first goes through the coordinator.
                #expect(try await cluster.send("counter/d", "increment")["count"] == .integer(1))
                let coordinatorKey = try RawClient.Curve.publicKey(file: cluster.keyPath("coordinator", secret: false))
                let location = try await DirectRouteTests.locate("counter/d", at: cluster.clients,
                                                                 curve: try Self.curve(cluster, "alice", server: coordinatorKey))
                let main = try #require(location.workers.first)
                let direct = try #require(main.endpoint, "\(location)")
                let workerKey = try #require(main.serverKey.flatMap(CurveKey.init(z85:)), "\(location)")
                let coordinator = cluster.clients
                func send(_ message: WireMessage, as name: String, direct road: Bool) async throws -> String {
                    let curve = try Self.curve(cluster, name, server: road ? workerKey : coordinatorKey)
                    return Self.outcome(try await DirectRouteTests.request(message, at: road ? direct : coordinator, curve: curve))
                }
                #expect(try await send(Self.keyed("counter/d", sequence: 1, #"{"add":{"_0":100}}"#, correlation: 1), as: "mallory", direct: true)
                        == "count 101")
                #expect(try await send(Self.keyed("counter/d", sequence: 1, "\"increment\"", correlation: 2), as: "alice", direct: true)
                        == "count 102")
                // Alice's retry through the coordinator: her first answer, nothing applied.
                #expect(try await send(Self.keyed("counter/d", sequence: 1, "\"increment\"", correlation: 3), as: "alice", direct: false)
                        == "count 102")
                // Mallory's through the coordinator: only her own answer.
                #expect(try await send(Self.keyed("counter/d", sequence: 1, #"{"add":{"_0":100}}"#, correlation: 4), as: "mallory", direct: false)
                        == "count 101")
                // And the other way: applied through the coordinator, repeated direct.
                #expect(try await send(Self.keyed("counter/d", sequence: 2, "\"increment\"", correlation: 5), as: "alice", direct: false)
                        == "count 103")
                #expect(try await send(Self.keyed("counter/d", sequence: 2, "\"increment\"", correlation: 6), as: "alice", direct: true)
                        == "count 103")
                #expect(try await cluster.state("counter/d")["count"] == .integer(103))
            }
        }
    }
}
