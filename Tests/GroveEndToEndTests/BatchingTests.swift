import Foundation
import GroveWire
import Testing

extension EndToEnd {
    /// Batches (many envelopes per ZeroMQ message) and the binary codec, end to end through the
    /// coordinator and a worker pool: order, replies and errors per envelope. Over ipc.
    @Suite(.timeLimit(.minutes(2)))
    struct BatchingTests {
        static let topology = TopologyFile(
            name: "batching", transport: .ipc,
            workers: [.init(name: "edge", count: 2)],
            machines: [.init(name: "counter", type: "Counter", worker: "edge", keyed: true)]
        )

        /// The worker's `Counter.Event`, as a client that knows it would declare it.
        enum CounterEvent: Codable { case increment, add(Int), reset, note(String) }
        struct CounterState: Codable, Equatable { var count: Int }

        @Test func batchedEventsAreAnsweredPerEnvelopeInOrder() async throws {
            try await withCluster(Self.topology) { cluster in
                let endpoint = cluster.clients
                let replies = try await onThread { () throws -> [WireMessage] in
                    let client = try RawClient(endpoint: endpoint)
                    // Two machines (likely on different workers), interleaved, plus one bad envelope.
                    var messages: [WireMessage] = []
                    for i in 1...100 {
                        let address = i.isMultiple(of: 2) ? "counter/even" : "counter/odd"
                        messages.append(WireMessage(Header(.event, correlation: UInt64(i)), address: address,
                                                    payload: Array(#"{"add":{"_0":\#(i)}}"#.utf8)))
                    }
                    messages.append(WireMessage(Header(.event, correlation: 999), address: "counter/odd", payload: Array("{".utf8)))
                    try client.send(Batch.pack(messages))
                    return try client.receiveReplies(messages.count)
                }
                // Per machine, the committed counts are the running sums in send order.
                var expected: [String: Int] = [:]
                var wrong: [String] = []
                let byCorrelation = Dictionary(replies.map { ($0.header.correlation, $0) }, uniquingKeysWith: { first, _ in first })
                for i in 1...100 {
                    let address = i.isMultiple(of: 2) ? "even" : "odd"
                    expected[address, default: 0] += i
                    let state = byCorrelation[UInt64(i)].flatMap { try? JSONValue(parsing: Data($0.payload)) }
                    if state != json(#"{"count":\#(expected[address]!)}"#) { wrong.append("event \(i): \(state?.description ?? "none")") }
                }
                #expect(wrong.isEmpty, "\(wrong)")
                let bad = try #require(byCorrelation[999])
                #expect(bad.header.kind == .error)
                #expect(try WireJSON.decode(WireError.self, from: bad.payload).code == .malformedJSON)
            }
        }

        /// The coordinator forwards replies in runs per client: with two clients batching to the
        /// same machines at once, their replies interleave in the workers' batches, and each
        /// client must still get every reply once, per machine in the order it sent.
        @Test func twoBatchingClientsEachGetTheirRepliesInOrder() async throws {
            try await withCluster(Self.topology) { cluster in
                let endpoint = cluster.clients
                let perClient = 300
                async let first = onThread { try Self.sendBatches(to: endpoint, count: perClient) }
                async let second = onThread { try Self.sendBatches(to: endpoint, count: perClient) }
                for replies in try await [first, second] {
                    let correlations = replies.map(\.header.correlation)
                    #expect(Set(correlations).count == perClient, "each request answered once")
                    #expect(replies.allSatisfy { $0.header.kind == .state })
                    // Per machine, replies arrive in send order, with counts that only grow: each
                    // machine's 100 replies, every one a count (none dropped from the comparison).
                    for machine in 0 ..< 3 {
                        let mine = replies.filter { Int($0.header.correlation) % 3 == machine }
                        #expect(mine.count == perClient / 3, "machine \(machine)")
                        #expect(mine.map(\.header.correlation) == mine.map(\.header.correlation).sorted(), "machine \(machine)")
                        let counts = try mine.map { try WireJSON.decode(CounterState.self, from: $0.payload).count }
                        #expect(counts == counts.sorted() && Set(counts).count == counts.count, "machine \(machine): \(counts)")
                    }
                }
            }
        }

        /// Sends `count` increments in batches of 50 over three shared machines, then reads
        /// every reply in arrival order.
        static func sendBatches(to endpoint: String, count: Int) throws -> [WireMessage] {
            let client = try RawClient(endpoint: endpoint)
            for start in stride(from: 1, through: count, by: 50) {
                let messages = (start ..< min(start + 50, count + 1)).map { i in
                    WireMessage(Header(.event, correlation: UInt64(i)), address: "counter/shared-\(i % 3)",
                                payload: Array(#""increment""#.utf8))
                }
                try client.send(Batch.pack(messages))
            }
            return try client.receiveReplies(count)
        }

        @Test func binaryEventsGetBinaryStates() async throws {
            try await withCluster(Self.topology) { cluster in
                let endpoint = cluster.clients
                // Expectations stay on the test's task: the thread only talks.
                let (replies, refusal) = try await onThread { () throws -> ([WireMessage], WireMessage) in
                    let client = try RawClient(endpoint: endpoint)
                    var replies: [WireMessage] = []
                    for (i, event) in [CounterEvent.add(40), .increment, .note("ignored text")].enumerated() {
                        replies.append(try client.request(WireMessage(Header(.event, flags: .binary, correlation: UInt64(i + 1)),
                                                                      address: "counter/binary", payload: try BinaryCodec.encode(event))))
                    }
                    // JSON bytes with the binary flag do not decode: a clear error, not a crash.
                    let refusal = try client.request(WireMessage(Header(.event, flags: .binary, correlation: 9), address: "counter/binary",
                                                                 payload: Array(#"{"increment":{}}"#.utf8)))
                    return (replies, refusal)
                }
                #expect(replies.map(\.header.kind) == [.state, .state, .state])
                #expect(replies.allSatisfy { $0.header.flags.contains(.binary) })
                let states = try replies.map { try BinaryCodec.decode(CounterState.self, from: $0.payload) }
                #expect(states == [CounterState(count: 40), CounterState(count: 41), CounterState(count: 42)])
                #expect(refusal.header.kind == .error)
                let error = try WireJSON.decode(WireError.self, from: refusal.payload)
                #expect(error.code == .undecodableEvent)
                #expect(error.message.contains("binary"))
                // The same machine still answers JSON clients with JSON.
                #expect(try await cluster.send("counter/binary", "increment") == json(#"{"count":43}"#))
            }
        }

        /// A batch far above the size at which the coordinator cuts the batches it sends on
        /// (1 MiB): every envelope still arrives, once, in order.
        @Test func aBatchLargerThanTheCutIsForwardedInOrder() async throws {
            try await withCluster(Self.topology) { cluster in
                let endpoint = cluster.clients
                let replies = try await onThread { () throws -> [WireMessage] in
                    let client = try RawClient(endpoint: endpoint)
                    let note = String(repeating: "n", count: 8_000)
                    let messages = (1...400).map { i in
                        WireMessage(Header(.event, correlation: UInt64(i)), address: "counter/big-\(i % 3)",
                                    payload: Array(#"{"note":{"_0":"\#(note)"}}"#.utf8))
                    }
                    try client.send(Batch.pack(messages))
                    return try client.receiveReplies(messages.count)
                }
                #expect(replies.count == 400)
                #expect(Set(replies.map(\.header.correlation)) == Set((1...400).map(UInt64.init)))
                // Each machine counted its events in order: its replies' counts run 1, 2, 3, ...
                // up to the number of events it was sent (133, 134, 133), every reply a count.
                for machine in 0..<3 {
                    let sent = (1...400).filter { $0 % 3 == machine }.count
                    let counts = try replies.filter { $0.address == "counter/big-\(machine)" }.sorted { $0.header.correlation < $1.header.correlation }
                        .map { try JSONValue(parsing: Data($0.payload)) }
                    #expect(counts == (1...sent).map { json(#"{"count":\#($0)}"#) }, "counter/big-\(machine)")
                }
            }
        }

        /// A client flooding big batches is answered `busy` once a worker has `workerOutbox`
        /// requests unanswered: every envelope still gets exactly one reply, and the workers
        /// stay registered (nothing restarts).
        @Test func floodingBatchesGetBusyAndTheWorkersSurvive() async throws {
            var topology = Self.topology
            topology.name = "flood"
            topology.workerOutbox = 50
            try await withCluster(topology) { cluster in
                let pidsBefore = try await cluster.list().workers.compactMap(\.pid)
                let endpoint = cluster.clients
                let codes = try await onThread { () throws -> [String: Int] in
                    let client = try RawClient(endpoint: endpoint)
                    var correlation: UInt64 = 0
                    for _ in 0..<20 {
                        try client.send(Batch.pack((0..<500).map { index in
                            correlation += 1
                            return WireMessage(Header(.event, flags: .noWait, correlation: correlation), address: "counter/f\(index % 50)",
                                               payload: Array(#"{"note":{"_0":"flood"}}"#.utf8))
                        }))
                    }
                    var codes: [String: Int] = [:]
                    for message in try client.receiveReplies(10_000) {
                        codes[message.error?.code.rawValue ?? message.header.kind.name, default: 0] += 1
                    }
                    return codes
                }
                #expect(codes.values.reduce(0, +) == 10_000)
                #expect((codes["busy"] ?? 0) > 0, "\(codes)")
                #expect((codes["accepted"] ?? 0) > 0, "\(codes)")
                #expect(Set(codes.keys).isSubset(of: ["busy", "accepted"]), "\(codes)")
                #expect(try await cluster.list().workers.compactMap(\.pid) == pidsBefore)
                #expect(try await cluster.send("counter/after", "increment") == json(#"{"count":1}"#))
            }
        }
    }
}
