import Foundation
import GroveWire
import Testing

extension EndToEnd {
    /// Scenario 29: per-machine event order holds end to end, for pipelined events on one
    /// connection and under concurrent senders. Over tcp.
    @Suite(.timeLimit(.minutes(2)))
    struct OrderingTests {
        static let topology = TopologyFile(
            name: "ordering", transport: .tcp,
            workers: [.init(name: "edge", count: 2)],
            machines: [.init(name: "counter", type: "Counter", worker: "edge", keyed: true),
                       .init(name: "sink", type: "Counter", worker: "edge")]
        )

        /// `add(i)` for i = 1...n commits 1+2+...+i: any reordering shows in some reply.
        @Test func pipelinedEventsCommitInSendOrder() async throws {
            try await withCluster(Self.topology) { cluster in
                let endpoint = cluster.clients
                let n = 400
                let replies = try await onThread { () throws -> [(UInt64, JSONValue?, MessageKind)] in
                    let client = try RawClient(endpoint: endpoint)
                    for i in 1...n {
                        try client.sendEvent(#"{"add":{"_0":\#(i)}}"#, to: "counter/pipeline", correlation: UInt64(i))
                    }
                    return try (1...n).map { _ in
                        let reply = try client.receive()
                        return (reply.header.correlation, reply.json, reply.header.kind)
                    }
                }
                #expect(replies.map(\.0) == (1...n).map(UInt64.init), "replies came back out of order")
                var wrong: [String] = []
                for (correlation, state, kind) in replies {
                    let i = Int(correlation)
                    if kind != .state || state != json(#"{"count":\#(i * (i + 1) / 2)}"#) {
                        wrong.append("event \(i): \(kind) \(state?.description ?? "nothing")")
                    }
                }
                #expect(wrong.isEmpty, "\(wrong)")
                #expect(try await cluster.state("counter/pipeline") == json(#"{"count":\#(n * (n + 1) / 2)}"#))
            }
        }

        /// Four connections pipeline `increment` to one machine at once. Each sender must see its
        /// own commits strictly rising (its events kept their order), and together the commits
        /// are exactly 1...total (none lost, none applied twice).
        @Test func concurrentSendersToOneMachineKeepTheirOwnOrder() async throws {
            try await withCluster(Self.topology) { cluster in
                let endpoint = cluster.clients
                let senders = 4, perSender = 150
                let counts = try await withThrowingTaskGroup(of: [Int].self) { group in
                    for _ in 0..<senders {
                        group.addTask {
                            try await onThread {
                                let client = try RawClient(endpoint: endpoint)
                                for i in 1...perSender {
                                    try client.sendEvent("\"increment\"", to: "sink", correlation: UInt64(i))
                                }
                                var seen: [Int] = []
                                for expected in 1...perSender {
                                    let reply = try client.receive()
                                    guard reply.header.correlation == UInt64(expected), reply.header.kind == .state,
                                          case .object(let members)? = reply.json, let count = members["count"] else {
                                        throw HarnessError("reply \(expected) was \(reply.header) \(reply.json.map { "\($0)" } ?? "")")
                                    }
                                    seen.append(Int("\(count)") ?? -1)
                                }
                                return seen
                            }
                        }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                for sequence in counts {
                    let rising = sequence == sequence.sorted() && Set(sequence).count == sequence.count
                    #expect(rising, "a sender's events were reordered: \(sequence)")
                }
                let all = counts.joined().sorted()
                #expect(all == Array(1...senders * perSender))
                #expect(try await cluster.state("sink") == json(#"{"count":\#(senders * perSender)}"#))
            }
        }

        /// Several fsm-send processes at once, each driving its own keyed instance (spread over
        /// a pool of two workers): every instance sees exactly its own events, in order.
        @Test func concurrentFsmSendProcessesEachSeeTheirOwnOrder() async throws {
            try await withCluster(Self.topology) { cluster in
                let keys = ["k1", "k2", "k3", "k4"]
                let steps = 8
                let mismatches = try await withThrowingTaskGroup(of: [String].self) { group in
                    for key in keys {
                        group.addTask {
                            var wrong: [String] = []
                            for i in 1...steps {
                                let state = try await cluster.send("counter/\(key)", #"{"add":{"_0":\#(i)}}"#)
                                if state != json(#"{"count":\#(i * (i + 1) / 2)}"#) { wrong.append("counter/\(key) after add(\(i)): \(state)") }
                            }
                            return wrong
                        }
                    }
                    return try await group.reduce(into: []) { $0 += $1 }
                }
                #expect(mismatches.isEmpty, "\(mismatches)")
                for key in keys {
                    #expect(try await cluster.state("counter/\(key)") == json(#"{"count":\#(steps * (steps + 1) / 2)}"#))
                }
                let instances = try await cluster.list().machines.first { $0.name == "counter" }?.instances ?? []
                let addresses = keys.map { "counter/" + $0 }
                #expect(Set(instances).isSuperset(of: addresses))
            }
        }
    }
}
