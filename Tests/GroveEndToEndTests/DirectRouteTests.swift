import Foundation
@_spi(GroveInternal) import GroveWire
import Testing
import ZeroMQ

extension EndToEnd {
    /// Direct routes (issue 39, docs/DIRECT-ROUTES.md step 3): a raw client locates a machine
    /// through the coordinator, then sends to the worker that runs it, on the worker's own
    /// socket, and gets the same answers the coordinator's route gives.
    @Suite(.timeLimit(.minutes(3)))
    struct DirectRouteTests {
        static let topology = TopologyFile(
            name: "direct", transport: .runtimeDirectory,
            workers: [.init(name: "edge", count: 2, direct: true)],
            machines: [
                .init(name: "counter", type: "Counter", worker: "edge", keyed: true),
                .init(name: "single", type: "Counter", worker: "edge"),
            ]
        )

        static func event(_ address: String, _ correlation: UInt64) -> WireMessage {
            WireMessage(Header(.event, correlation: correlation), address: address, payload: Array(#""increment""#.utf8))
        }

        static func get(_ address: String, _ correlation: UInt64) -> WireMessage {
            WireMessage(Header(.get, correlation: correlation), address: address)
        }

        /// The `count` of a `state` reply; `nil` for anything else.
        static func count(_ reply: WireMessage) -> Int? {
            guard reply.header.kind == .state, case .object(let state)? = reply.json, case .integer(let count)? = state["count"] else {
                return nil
            }
            return Int(count)
        }

        /// Sends `message` on a new raw client and returns the reply with its correlation.
        static func request(_ message: WireMessage, at endpoint: String, curve: RawClient.Curve? = nil,
                            timeout: Duration = .seconds(10)) async throws -> WireMessage {
            try await onThread { try RawClient(endpoint: endpoint, curve: curve).request(message, timeout: timeout) }
        }

        /// Where `address` lives: its machine's location, from the coordinator.
        static func locate(_ address: String, at endpoint: String, curve: RawClient.Curve? = nil) async throws -> Location {
            let reply = try await request(WireMessage(Header(.locate, correlation: 9), address: address), at: endpoint, curve: curve)
            guard reply.header.kind == .location else { throw HarnessError("locate answered \(reply.header.kind): \(reply.error?.message ?? "")") }
            return try WireJSON.decode(Location.self, from: reply.payload)
        }

        @Test func aRawClientSendsDirectAndGetsTheCoordinatorsAnswers() async throws {
            try await withCluster(Self.topology) { cluster in
                let watcher = try await cluster.watch(["state:counter/", "state:single"])
                let location = try await Self.locate("counter", at: cluster.clients)
                #expect(location.workers.map(\.state) == [.registered, .registered], "\(location)")
                let endpoints = location.workers.compactMap(\.endpoint)
                #expect(endpoints.count == 2 && endpoints.allSatisfy { $0.hasPrefix("ipc://") && $0.contains("/direct/edge-") })

                // A keyed instance starts through the coordinator; a direct event never starts one.
                #expect(try await cluster.send("counter/a", "increment")["count"] == .integer(1))
                var reasons: [String] = []
                for endpoint in endpoints {
                    let fresh = try await Self.request(Self.event("counter/fresh", 1), at: endpoint)
                    #expect(fresh.error?.code == .moved, "\(fresh.error?.message ?? "\(fresh.header.kind)")")
                    reasons.append(fresh.error?.reason?.rawValue ?? "none")
                }
                #expect(reasons.sorted() == ["not-here", "not-spawned"])

                // Exactly one worker serves counter/a; the other says it is not placed there.
                var home: String?
                for endpoint in endpoints {
                    let reply = try await Self.request(Self.event("counter/a", 2), at: endpoint)
                    if let count = Self.count(reply) {
                        #expect(count == 2)
                        home = endpoint
                    } else {
                        #expect(reply.error?.code == .moved && reply.error?.reason == .notHere, "\(reply.error?.message ?? "")")
                        #expect(reply.error?.message.contains("was not applied") == true)
                    }
                }
                let direct = try #require(home, "no worker served counter/a")

                // A batch of two events and a get, answered in order (batched back: read in both forms).
                let replies = try await onThread { () throws -> [WireMessage] in
                    let client = try RawClient(endpoint: direct)
                    try client.send(Batch.pack([Self.event("counter/a", 10), Self.event("counter/a", 11), Self.get("counter/a", 12)]))
                    return try client.receiveReplies(3)
                }
                #expect(replies.map(\.header.correlation) == [10, 11, 12])
                #expect(replies.map(Self.count) == [3, 4, 4])

                // The same state on both routes.
                let got = try await Self.request(Self.get("counter/a", 20), at: direct)
                #expect(Self.count(got) == 4)
                #expect(try await cluster.state("counter/a")["count"] == .integer(4))

                // A single machine needs no spawning: served by its worker at once.
                let single = try await Self.locate("single", at: cluster.clients)
                let singleEndpoint = try #require(single.workers.first?.endpoint)
                #expect(Self.count(try await Self.request(Self.event("single", 30), at: singleEndpoint)) == 1)
                #expect(try await cluster.state("single")["count"] == .integer(1))

                // What only the coordinator answers is sent back there.
                let list = try await Self.request(WireMessage(Header(.list, correlation: 40)), at: direct)
                #expect(list.error?.code == .unknownKind && list.error?.message.contains("coordinator's clients endpoint") == true)

                // The watcher saw every state (0 as the instance started), whichever route its event took.
                try await watcher.waitFor("counter/a at 4") { $0.topic == "state:counter/a" && $0.state?["count"] == .integer(4) }
                #expect(watcher.states(of: "counter/a").compactMap { $0["count"] } == (0...4).map { .integer($0) })
                try await watcher.waitFor("single at 1") { $0.topic == "state:single" }
            }
        }

        /// `fsm-send --route direct`: events and reads by the worker's socket, the same states the
        /// coordinator's road reads.
        @Test func fsmSendOnTheDirectRoadSendsAndReadsACounter() async throws {
            try await withCluster(Self.topology) { cluster in
                let watcher = try await cluster.watch(["state:counter/b"])
                var counts: [JSONValue?] = []
                for _ in 1...3 {
                    let sent = try await cluster.fsmSend(["counter/b", "increment", "--route", "direct"])
                    #expect(sent.status == 0, "\(sent)")
                    counts.append((try? JSONValue(parsing: Data(sent.stdout.utf8)))?["count"])
                }
                #expect(counts == [.integer(1), .integer(2), .integer(3)])
                let direct = try await cluster.fsmSend(["state", "counter/b", "--route", "direct"])
                #expect(direct.status == 0, "\(direct)")
                #expect(try JSONValue(parsing: Data(direct.stdout.utf8)) == (try await cluster.state("counter/b")))
                #expect(try await cluster.state("counter/b")["count"] == .integer(3))
                try await watcher.waitFor("counter/b at 3") { $0.topic == "state:counter/b" && $0.state?["count"] == .integer(3) }
                #expect(watcher.states(of: "counter/b").compactMap { $0["count"] } == (0...3).map { .integer($0) })
            }
        }

        static let durable = TopologyFile(
            name: "directstate", transport: .runtimeDirectory,
            workers: [.init(name: "data", direct: true)],
            machines: [.init(name: "counter", type: "Counter", worker: "data", keyed: true, durability: "state")]
        )

        /// What a direct reply acknowledged was committed first: a worker killed right after is
        /// restarted from its store with every acknowledged event, on a new endpoint.
        @Test func whatADirectReplyAcknowledgedOutlivesAKill() async throws {
            try await withCluster(Self.durable) { cluster in
                #expect(try await cluster.send("counter/d", "increment")["count"] == .integer(1))
                let before = try await Self.locate("counter", at: cluster.clients)
                let endpoint = try #require(before.workers.first?.endpoint)
                let counts = try await onThread { () throws -> [Int?] in
                    let client = try RawClient(endpoint: endpoint)
                    return try (2...6).map { try Self.count(client.request(Self.event("counter/d", UInt64($0)))) }
                }
                #expect(counts == [2, 3, 4, 5, 6])
                let pid = try await cluster.workerPID("data")
                kill(pid, SIGKILL)
                try await waitUntil("data to run as a new process", timeout: .seconds(30)) {
                    (try? await cluster.workerPID("data")).map { $0 != pid } ?? false
                }
                let after = try await eventually("data registered with its direct endpoint") { () async throws -> String? in
                    let location = try await Self.locate("counter", at: cluster.clients)
                    return location.workers.first?.state == .registered ? location.workers.first?.endpoint : nil
                }
                #expect(after != endpoint, "a new process binds a new endpoint")
                #expect(Self.count(try await Self.request(Self.get("counter/d", 7), at: after)) == 6)
                #expect(try await cluster.state("counter/d")["count"] == .integer(6))
            }
        }

        static let curve = TopologyFile(
            name: "directcurve", transport: .tcp,
            workers: [.init(name: "main", direct: true), .init(name: "edge", external: true, key: "keys/edge.key")],
            machines: [
                .init(name: "counter", type: "Counter", worker: "main", keyed: true),
                .init(name: "tally", type: "Counter", worker: "edge"),
            ],
            security: """
                { "coordinatorKey": "keys/coordinator.key_secret",
                  "clients": [ { "key": "keys/ops.key", "roles": ["read", "send", "admin"] },
                               { "key": "keys/reader.key", "roles": ["read"] },
                               { "key": "keys/sender.key", "roles": ["read", "send"] } ] }
                """,
            keyPairs: ["coordinator", "edge", "ops", "reader", "sender", "stranger"],
            clientKey: "ops"
        )

        @Test func onCurveTheWorkerJudgesKeysAsTheCoordinatorDoes() async throws {
            try await withCluster(Self.curve) { cluster in
                let coordinatorKey = try RawClient.Curve.publicKey(file: cluster.keyPath("coordinator", secret: false))
                func curve(_ name: String, server: CurveKey) throws -> RawClient.Curve {
                    RawClient.Curve(server: server, keys: try RawClient.Curve.keyPair(file: cluster.keyPath(name, secret: true)))
                }
                #expect(try await cluster.send("counter/a", "increment")["count"] == .integer(1))
                let location = try await Self.locate("counter/a", at: cluster.clients, curve: try curve("reader", server: coordinatorKey))
                let main = try #require(location.workers.first)
                let endpoint = try #require(main.endpoint, "\(location)")
                let serverKey = try #require(main.serverKey.flatMap(CurveKey.init(z85:)), "no server key in \(location)")
                #expect(endpoint.hasPrefix("tcp://"))

                // reader may read direct, not send: refused as the coordinator refuses it.
                let read = try await Self.request(Self.get("counter/a", 1), at: endpoint, curve: try curve("reader", server: serverKey))
                #expect(Self.count(read) == 1)
                let refused = try await Self.request(Self.event("counter/a", 2), at: endpoint, curve: try curve("reader", server: serverKey))
                let coordinators = try await Self.request(Self.event("counter/a", 2), at: cluster.clients,
                                                          curve: try curve("reader", server: coordinatorKey))
                #expect(refused.error?.code == .forbidden && refused.error?.message == coordinators.error?.message,
                        "direct: \(refused.error?.message ?? ""); coordinator: \(coordinators.error?.message ?? "")")
                // sender may send, not stop.
                let sent = try await Self.request(Self.event("counter/a", 3), at: endpoint, curve: try curve("sender", server: serverKey))
                #expect(Self.count(sent) == 2)
                let stop = try await Self.request(WireMessage(Header(.stop, correlation: 4), address: "counter/a"), at: endpoint,
                                                  curve: try curve("sender", server: serverKey))
                #expect(stop.error?.code == .forbidden && stop.error?.message.contains("admin role") == true, "\(stop.error?.message ?? "")")
                #expect(try await cluster.state("counter/a")["count"] == .integer(2))

                // A worker's key and a key the topology does not know: the handshake fails, nothing comes back.
                for name in ["edge", "stranger"] {
                    let client = try curve(name, server: serverKey)
                    await #expect(throws: HarnessError.self, "\(name) was answered") {
                        _ = try await Self.request(Self.get("counter/a", 5), at: endpoint, curve: client, timeout: .seconds(2))
                    }
                }
                try await cluster.waitForLog("to the direct endpoint was refused", "is not one the topology accepts", count: 2)
            }
        }

        /// A key without `send` is refused by `fsm-send --route direct` as by the coordinator's
        /// road: exit status 4 and the coordinator's `forbidden` text.
        @Test func fsmSendOnTheDirectRoadIsRefusedWhatTheKeyMayNotDo() async throws {
            try await withCluster(Self.curve) { cluster in
                #expect(try await cluster.send("counter/a", "increment")["count"] == .integer(1))
                let coordinators = try await cluster.fsmSend(["counter/a", "increment"], as: "reader")
                let direct = try await cluster.fsmSend(["counter/a", "increment", "--route", "direct"], as: "reader")
                #expect(coordinators.status == 4 && coordinators.stderr.contains("forbidden") && coordinators.stderr.contains("send role"),
                        "\(coordinators)")
                #expect(direct.status == 4, "\(direct)")
                #expect(direct.stderr == coordinators.stderr, "direct: \(direct.stderr); coordinator: \(coordinators.stderr)")
                // The reader may read on the direct road, and sender may send there.
                let read = try await cluster.fsmSend(["state", "counter/a", "--route", "direct"], as: "reader")
                #expect(read.status == 0 && (try? JSONValue(parsing: Data(read.stdout.utf8)))?["count"] == .integer(1), "\(read)")
                let sent = try await cluster.fsmSend(["counter/a", "increment", "--route", "direct"], as: "sender")
                #expect(sent.status == 0, "\(sent)")
                #expect(try await cluster.state("counter/a")["count"] == .integer(2))
            }
        }
    }
}
