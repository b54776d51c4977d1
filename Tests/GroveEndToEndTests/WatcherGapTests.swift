import Foundation
@_spi(GroveInternal) import GroveWire
import Testing

extension EndToEnd {
    /// Issue 22, item 4: a watcher that falls behind has publications dropped for it; their
    /// numbers show it how many, and `--resync` brings it the current states (Clone pattern).
    @Suite(.timeLimit(.minutes(2)))
    struct WatcherGapTests {
        /// A watcher outbox of 10 publications: a stopped watcher overflows it quickly.
        static let topology: TopologyFile = {
            var topology = TopologyFile(name: "gaps", transport: .ipc, workers: [.init(name: "data")],
                                        machines: [.init(name: "counter", type: "Counter", worker: "data", keyed: true)])
            topology.watcherOutbox = 10
            return topology
        }()

        /// `fsm-send watch --resync` is stopped with SIGSTOP while 20,000 increments commit (each
        /// one published on `state:counter/gap`), then continued. It must print a gap line whose
        /// count is the number of states it did not print, told both by the numbers and by the
        /// counts in the states around the gap; then a snapshot line with the counter's current
        /// state at a number that agrees with it; then, for one more increment, the next number
        /// with no gap.
        @Test func aStoppedWatcherReportsTheGapItMissedAndResyncs() async throws {
            try await withCluster(Self.topology) { cluster in
                let address = "counter/gap", topic = "state:counter/gap"
                let watcher = try await cluster.watch(["state:counter/"], options: ["--resync"])
                _ = try await cluster.send(address, "increment")
                try await watcher.waitFor("the first state of \(address)") { $0.topic == topic && Self.count($0) == 1 }

                watcher.process.signal(SIGSTOP)
                let endpoint = cluster.clients
                let sent: Int
                do {
                    sent = try await Self.increment(address, batches: 40, of: 500, at: endpoint)
                    // Every state published before the watcher runs again (a worker sends its
                    // state changes a little after its replies): asked with a snapshot.
                    try await waitUntil("the coordinator to publish count \(sent + 1)") {
                        try await Self.snapshot(of: topic, at: endpoint).flatMap { Self.count($0.payload) } == sent + 1
                    }
                } catch {
                    watcher.process.signal(SIGCONT)
                    throw error
                }
                watcher.process.signal(SIGCONT)

                let gaps = try await watcher.waitFor("the gap line") { $0.kind == "gap" && $0.topic == topic }
                let snapshots = try await watcher.waitFor("the snapshot line") { $0.kind == "snapshot" && $0.topic == topic }
                #expect(Self.count(snapshots[0]) == sent + 1, "the snapshot shows the current state")
                // One more increment: published with the number after the snapshot's, no gap.
                _ = try await cluster.send(address, "increment")
                try await watcher.waitFor("the last state") { $0.kind == "state-changed" && Self.count($0) == sent + 2 }

                // Every number on the topic is printed, counted in the gap line just before the
                // next printed one, or covered by a snapshot; and each gap matches the commits the
                // watcher did not see. A snapshot's number agrees with its state.
                let lines = watcher.events.filter { $0.topic == topic }
                let shown = lines.filter { $0.kind != "state-changed" || ($0.sequence ?? 0) % 1000 == 0 }
                    .map { "\($0.kind) #\($0.sequence ?? -1) missed \($0.missed ?? -1) count \(Self.count($0) ?? -1)" }
                    .joined(separator: "; ")
                var base: (sequence: Int, count: Int)?
                var missedBefore = 0
                var accounted = 0
                for line in lines {
                    if line.kind == "gap" {
                        missedBefore += line.missed ?? 0
                        continue
                    }
                    guard let sequence = line.sequence, let count = Self.count(line) else {
                        Issue.record("a line without a number or a count: \(line)")
                        continue
                    }
                    if let base {
                        if line.kind == "snapshot" {
                            #expect(sequence >= base.sequence && count - base.count == sequence - base.sequence,
                                    "snapshot #\(sequence) with count \(count) after #\(base.sequence) with \(base.count): \(shown)")
                        } else {
                            #expect(sequence - base.sequence - 1 == missedBefore, "#\(base.sequence) then #\(sequence), gap lines said \(missedBefore): \(shown)")
                            #expect(count - base.count - 1 == missedBefore, "counts \(base.count) then \(count), gap lines said \(missedBefore)")
                            accounted += missedBefore
                        }
                    }
                    missedBefore = 0
                    base = (sequence, count)
                }
                let reported = gaps.compactMap(\.missed).reduce(0, +)
                #expect(reported > 0, "the stopped watcher missed nothing: the outbox of 10 did not overflow")
                #expect(accounted == reported, "\(shown)")
                #expect(base?.count == sent + 2)
                #expect(watcher.process.stderr.contains("missed \(gaps[0].missed ?? -1) publications on \(topic)"), "\(watcher.process.stderr)")
            }
        }

        static func count(_ event: WatchEvent) -> Int? { count(event.payload) }

        /// The counter's count in a state-changed payload.
        static func count(_ payload: JSONValue) -> Int? {
            guard case .integer(let count)? = payload.objectValue?["state"]?.objectValue?["count"] else { return nil }
            return Int(count)
        }

        /// The coordinator's snapshot entry for `topic`, asked over a raw connection.
        static func snapshot(of topic: String, at endpoint: String) async throws -> StateSnapshot.Entry? {
            try await onThread {
                let client = try RawClient(endpoint: endpoint)
                let payload = Array(#"{"prefixes":[\#(JSONValue.string(topic))]}"#.utf8)
                let reply = try client.request(WireMessage(Header(.snapshot, correlation: 1), payload: payload))
                guard reply.header.kind == .states else { throw HarnessError("snapshot answered \(reply.header.kind): \(reply.error?.description ?? "")") }
                return try WireJSON.decode(StateSnapshot.self, from: reply.payload).states.first { $0.topic == topic }
            }
        }

        /// Sends `batches` batches of `size` increments to `address`, each answered before the
        /// next is sent (so every one committed); returns how many were sent.
        static func increment(_ address: String, batches: Int, of size: Int, at endpoint: String) async throws -> Int {
            try await onThread {
                let client = try RawClient(endpoint: endpoint)
                var correlation: UInt64 = 0
                for _ in 0..<batches {
                    var builder = BatchBuilder()
                    for _ in 0..<size {
                        correlation += 1
                        builder.append(WireMessage(Header(.event, correlation: correlation), address: address,
                                                   payload: Array(#""increment""#.utf8)))
                    }
                    try client.send(frames: builder.frames())
                    let replies = try client.receiveReplies(size)
                    if let refused = replies.first(where: { $0.header.kind != .state }) {
                        throw HarnessError("an increment was refused: \(refused.error?.description ?? "kind \(refused.header.kind)")")
                    }
                }
                return Int(correlation)
            }
        }
    }
}
