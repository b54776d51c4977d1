import Foundation
import GroveWire
import Testing

extension EndToEnd {
    /// Issue 34, item 0: a client that sends no-wait events as fast as its socket takes them and
    /// reads nothing for a long while costs nobody else. On bf2b560 such a client stalled the
    /// coordinator (every busy it owed copied all those owed before it) until both workers were
    /// declared lost, killed and restarted, and the supervisor escalated. A scaled equivalent of
    /// the issue's 60-second run; `Scripts/slow-client.sh --silent` runs the full one and the
    /// five-minute one on the default topology, with the latencies.
    @Suite(.timeLimit(.minutes(4)))
    struct SilentClientTests {
        /// The default topology's shape: durable keyed counters on `main`, an io worker beside it.
        static let topology = TopologyFile(
            name: "silent-client", transport: .ipc, workers: [.init(name: "main"), .init(name: "io")],
            machines: [.init(name: "counter", type: "Counter", worker: "main", keyed: true, durability: "state"),
                       .init(name: "auth", type: "AuthFlow", worker: "main", durability: "state")],
            io: [("Authenticate", "io"), ("VerifyTwoFactor", "io")])

        /// What the silent client sent and what it got back.
        struct Flood: Sendable {
            var sent: UInt64 = 0
            var replies: [UInt64: Int] = [:]
            var busy = 0
            var others: [String: Int] = [:]
        }

        @Test func aClientThatReadsNothingForLongCostsNobodyElse() async throws {
            try await withCluster(Self.topology) { cluster in
                let pids = try await (cluster.workerPID("main"), cluster.workerPID("io"))
                let silence = Duration.seconds(25)
                let started = ContinuousClock.now
                // The client: 100 keys, no-wait increments as fast as its socket takes them (at
                // most 200,000), reading nothing until `silence` has passed; then every reply.
                let endpoint = cluster.clients
                let flood = Task {
                    try await onThread { () throws -> Flood in
                        let client = try RawClient(endpoint: endpoint, receiveQueue: 10)
                        var flood = Flood()
                        while ContinuousClock.now - started < silence {
                            guard flood.sent < 200_000 else {
                                Thread.sleep(forTimeInterval: 0.05)
                                continue
                            }
                            flood.sent += 1
                            try client.sendEvent(#""increment""#, to: "counter/s\(flood.sent % 100)", correlation: flood.sent,
                                                 flags: .noWait)
                        }
                        while flood.replies.count < flood.sent, let frames = try client.receiveFrames(timeout: .seconds(30)) {
                            let message = try WireMessage(frames: frames)
                            for reply in message.header.kind == .batch ? try Batch.unpack(message.payload) : [message] {
                                flood.replies[reply.header.correlation, default: 0] += 1
                                switch reply.error?.code {
                                case .busy?: flood.busy += 1
                                case nil: break
                                case let code?: flood.others[code.rawValue, default: 0] += 1
                                }
                            }
                        }
                        return flood
                    }
                }
                // Meanwhile another client, four times a second: each of its events is answered
                // with its own state, not a busy, a lost worker or a timeout.
                var probes = 0
                var slowest = Duration.zero
                while ContinuousClock.now - started < silence + .seconds(2) {
                    let sent = ContinuousClock.now
                    let result = try await cluster.fsmSend(["probe", "increment", "--timeout", "10"])
                    slowest = max(slowest, ContinuousClock.now - sent)
                    probes += 1
                    #expect(result.status == 0 && result.stdout.contains("\"count\":\(probes)"),
                            "probe \(probes) at \(ContinuousClock.now - started): \(result)")
                    try await Task.sleep(for: .milliseconds(250))
                }
                let result = try await flood.value
                // Every request of the silent client answered exactly once.
                #expect(result.replies.count == Int(result.sent), "\(result.sent) sent, \(result.replies.count) answered")
                #expect(result.replies.values.allSatisfy { $0 == 1 }, "some answered twice")
                #expect(result.busy > 0, "the client fell behind and was answered busy")
                #expect(result.others.keys.allSatisfy { $0 == "mailbox-full" }, "\(result.others)")
                // No worker was declared lost or restarted; the topology runs.
                #expect(!cluster.log.contains("lost ("), "a worker was declared lost:\n\(cluster.log.suffix(3000))")
                #expect(try await cluster.workerPID("main") == pids.0)
                #expect(try await cluster.workerPID("io") == pids.1)
                #expect(try await cluster.send("counter/s1", "increment")["count"] != nil)
                // A measurement, not a criterion: Scripts/slow-client.sh reports these.
                print("silent client: \(result.sent) sent, \(result.busy) busy; \(probes) probes, the slowest \(slowest)")
            }
        }
    }
}
