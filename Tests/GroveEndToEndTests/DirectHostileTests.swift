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
        static let topology = {
            var topology = TopologyFile(
                name: "directhostile", transport: .runtimeDirectory,
                workers: [.init(name: "main", direct: true)],
                machines: [.init(name: "plain", type: "Counter", worker: "main", keyed: true)]
            )
            // Above the default 10,000: what is bounded here is the worker's work per envelope.
            topology.limits = #"{ "batchEnvelopes": \#(envelopes) }"#
            return topology
        }()

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

        /// The bound on a batch's envelopes (`limits.batchEnvelopes`, 100 here), on both roads.
        static let bounded = {
            var topology = TopologyFile(
                name: "batchbound", transport: .runtimeDirectory,
                workers: [.init(name: "main", direct: true)],
                machines: [.init(name: "plain", type: "Counter", worker: "main", keyed: true)]
            )
            topology.limits = #"{ "batchEnvelopes": 100 }"#
            return topology
        }()

        /// h31: one 16 MiB batch of 700,000 `get`s held a release coordinator's loop for 1.9 s
        /// and a worker's direct socket for 1 s. A batch whose header counts more envelopes than
        /// `limits.batchEnvelopes` is refused whole, `oversized` under correlation 0, before any
        /// envelope is read, through the coordinator and straight to the worker: none of its
        /// increments is applied, a header that claims 700,000 over two envelopes is refused for
        /// its count, and the same client's next batch, within the bound, is answered envelope
        /// by envelope. The worker is neither lost nor restarted.
        @Test func aBatchPastTheBoundIsRefusedWholeOnBothRoadsAndTheNextIsServed() async throws {
            try await withCluster(Self.bounded) { cluster in
                #expect(try await cluster.send("plain/b", "increment")["count"] == .integer(1))
                let pid = try await cluster.workerPID("main")
                let location = try await DirectRouteTests.locate("plain", at: cluster.clients)
                let direct = try #require(location.workers.first?.endpoint, "\(location)")
                let coordinator = cluster.clients

                let problems = try await onThread { () throws -> [String] in
                    var problems: [String] = []
                    for (road, endpoint, answerer) in [("coordinator", coordinator, "the coordinator"), ("direct", direct, "worker main")] {
                        let client = try RawClient(endpoint: endpoint)
                        func refusal(of batch: WireMessage, counting count: Int) throws {
                            try client.send(batch)
                            let replies = try client.receiveReplies(1)
                            guard replies.count == 1, let error = replies[0].error, replies[0].header.correlation == 0 else {
                                return problems.append("\(road): \(count) envelopes answered \(replies.map(\.header))")
                            }
                            let says = ["counts \(count) envelopes", "\(answerer) accepts at most 100", "limits.batchEnvelopes",
                                        "split it into batches of at most 100"]
                            if error.code != .oversized || !says.allSatisfy(error.message.contains) {
                                problems.append("\(road): \(error.code.rawValue) \(error.message)")
                            }
                        }
                        let increments = (1...101).map {
                            WireMessage(Header(.event, correlation: UInt64($0)), address: "plain/b", payload: Array(#""increment""#.utf8))
                        }
                        try refusal(of: Batch.pack(increments), counting: 101)
                        let two = Batch.pack([DirectRouteTests.get("plain/b", 201), DirectRouteTests.get("plain/b", 202)])
                        try refusal(of: WireMessage(Header(.batch, correlation: 700_000), payload: two.payload), counting: 700_000)

                        let gets = (1001...1100).map { DirectRouteTests.get("plain/b", UInt64($0)) }
                        try client.send(Batch.pack(gets))
                        let answers = try client.receiveReplies(100)
                        let correlations = Set(answers.map(\.header.correlation))
                        if correlations != Set(1001...1100) || !answers.allSatisfy({ DirectRouteTests.count($0) == 1 }) {
                            problems.append("\(road): the batch within the bound was answered \(answers.map { ($0.header.correlation, $0.error?.message ?? "\($0.header.kind)") })")
                        }
                    }
                    return problems
                }
                #expect(problems.isEmpty, "\(problems)")
                #expect(try await cluster.workerPID("main") == pid, "the worker was restarted:\n\(cluster.log.suffix(2000))")
                #expect(!cluster.log.contains("worker main lost"), "the worker was declared lost:\n\(cluster.log.suffix(2000))")
                #expect(try await cluster.send("plain/b", "increment")["count"] == .integer(2), "none of the refused increments was applied")
            }
        }

        static let crashing = TopologyFile(
            name: "directcrash", transport: .tcp,
            workers: [.init(name: "main", arguments: ["--with-test-machines"], direct: true), .init(name: "side")],
            machines: [.init(name: "counter", type: "CrashTestCounter", worker: "main", keyed: true),
                       .init(name: "other", type: "Counter", worker: "side", keyed: true)],
            security: """
                { "coordinatorKey": "keys/coordinator.key_secret",
                  "clients": [ { "key": "keys/ops.key", "roles": ["read", "send", "admin"] },
                               { "key": "keys/sender.key", "roles": ["read", "send"], "machines": ["counter*"] } ] }
                """,
            keyPairs: ["coordinator", "ops", "sender"],
            clientKey: "ops"
        )

        /// Issue 34's attack 3 on the direct road: a key with `send` on `counter*` only starts
        /// fresh instances `counter/k-N` with an overflowing add (through the coordinator, as a
        /// direct event never starts one), then sends the same add again straight to worker
        /// `main`'s socket, where it traps the worker. Each crash is attributed to the pattern and
        /// to the key as on the coordinator's road (the worker's id for a direct request names
        /// its sender): after two, the pattern is quarantined and the key suspended, and the
        /// topology never escalates; the key is then refused on both roads.
        @Test func overflowingAddsSentDirectAreContainedAndTheSenderSuspended() async throws {
            try await withCluster(Self.crashing) { cluster in
                let launcher = cluster.launch.pid
                let coordinatorKey = try RawClient.Curve.publicKey(file: cluster.keyPath("coordinator", secret: false))
                let senderKeys = try RawClient.Curve.keyPair(file: cluster.keyPath("sender", secret: true))
                let overflow = EndToEnd.CrashContainmentTests.overflow
                var outcomes: [String] = []
                for key in 1...6 {
                    let address = "counter/k-\(key)"
                    let started = try await cluster.fsmSend([address, overflow, "--no-retry"], as: "sender")
                    outcomes.append("\(address) by the coordinator: \(started.status) \(started.stderr.prefix(120))")
                    let location = try await DirectRouteTests.locate(address, at: cluster.clients,
                                                                     curve: RawClient.Curve(server: coordinatorKey, keys: senderKeys))
                    guard let main = location.workers.first, let endpoint = main.endpoint,
                          let serverKey = main.serverKey.flatMap(CurveKey.init(z85:)) else {
                        outcomes.append("\(address): main not registered with a direct endpoint: \(location)")
                        continue
                    }
                    let event = WireMessage(Header(.event, correlation: UInt64(key)), address: address, payload: Array(overflow.utf8))
                    let direct = try? await DirectRouteTests.request(event, at: endpoint, curve: RawClient.Curve(server: serverKey, keys: senderKeys),
                                                                     timeout: .seconds(3))
                    outcomes.append("\(address) direct: \(direct.map { $0.error?.message ?? "\($0.header.kind)" } ?? "no answer")")
                    #expect(ProcessTable.isAlive(launcher), "fsm-launch stopped after key \(key):\n\(outcomes.joined(separator: "\n"))")
                }
                #expect(cluster.launch.exitStatus == nil, "fsm-launch exited: \(cluster.log.suffix(3000))")
                #expect(!cluster.log.contains("Stopping the topology"), "escalated:\n\(cluster.log.suffix(3000))")
                let crashes = cluster.log.split(separator: "\n").filter { $0.contains("last process died while it ran a sent event") }
                #expect(crashes.count == 2, "\(outcomes.joined(separator: "\n"))\n\(crashes)")
                try await cluster.waitForLog("suspended client key", "after 2 worker crashes attributed to its events")
                try await cluster.waitForLog("no longer counts toward group 'main'", count: 2)

                // Refused on both roads now, with the coordinator's text.
                let refused = try await cluster.fsmSend(["counter/k-1", "increment", "--route", "direct"], as: "sender")
                #expect(refused.status == 4 && refused.stderr.contains("suspended: 2 worker crashes"), "\(refused)")
                #expect(try await cluster.send("other/watch", "increment")["count"] == .integer(1), "side serves throughout")
            }
        }
    }
}
