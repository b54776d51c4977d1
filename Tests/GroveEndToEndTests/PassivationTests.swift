import Foundation
import GroveWire
import Testing

extension EndToEnd {
    /// Issue 37 item 4: idle keyed instances leave their worker's memory after
    /// `passivateAfterMs` and come back from the store with their next event, or for their
    /// timer. The signal is the worker's `passivated ...` log line.
    @Suite(.timeLimit(.minutes(2)))
    struct PassivationTests {
        static let topology = TopologyFile(
            name: "passivation", transport: .ipc,
            workers: [.init(name: "edge"), .init(name: "data-io")],
            machines: [.init(name: "counters", type: "Counter", worker: "edge", keyed: true, durability: "state", passivateAfterMs: 200),
                       .init(name: "ledgers", type: "Counter", worker: "edge", keyed: true, durability: "journal", passivateAfterMs: 200),
                       .init(name: "scratch", type: "Counter", worker: "edge", keyed: true, passivateAfterMs: 200),
                       .init(name: "notes", type: "Counter", worker: "edge", keyed: true, passivateAfterMs: 600_000),
                       .init(name: "poller", type: "PollingService", worker: "edge", keyed: true, durability: "state",
                             passivateAfterMs: 200)],
            io: [("FetchData", "data-io")]
        )

        @Test func passivatedCountersComeBackWithTheirCountsAndANonDurableOneStartsAfresh() async throws {
            try await withCluster(Self.topology) { cluster in
                #expect(try await cluster.send("counters/a", #"{"add":{"_0":3}}"#) == json(#"{"count":3}"#))
                #expect(try await cluster.send("counters/b", #"{"add":{"_0":5}}"#) == json(#"{"count":5}"#))
                #expect(try await cluster.send("ledgers/a", #"{"add":{"_0":2}}"#) == json(#"{"count":2}"#))
                #expect(try await cluster.send("ledgers/a", "increment") == json(#"{"count":3}"#))
                #expect(try await cluster.send("scratch/x", #"{"add":{"_0":7}}"#) == json(#"{"count":7}"#))
                // Every keyed instance left: only the harness's probe (a single machine) is in memory.
                try await cluster.waitForLog("passivated", "written to the store", " 1 in memory", timeout: .seconds(20))
                #expect(try await cluster.send("counters/a", "increment") == json(#"{"count":4}"#))
                #expect(try await cluster.state("counters/b") == json(#"{"count":5}"#))
                #expect(try await cluster.send("ledgers/a", "increment") == json(#"{"count":4}"#))
                #expect(try await cluster.send("scratch/x", "increment") == json(#"{"count":1}"#))
                // And again, once more passivated: brought back twice, counts kept.
                try await cluster.waitForLog("passivated", " 1 in memory", count: 2, timeout: .seconds(20))
                #expect(try await cluster.send("counters/a", "increment") == json(#"{"count":5}"#))
                #expect(try await cluster.send("ledgers/a", "increment") == json(#"{"count":5}"#))
            }
        }

        /// `notes` and `scratch` keep nothing: their idle instances rest as their state alone
        /// (an event without an idempotency key runs there); a watcher, a read and an event with
        /// a key move one to a host; a resting one leaves memory as a host does.
        @Test func aMachineThatKeepsNothingRestsAsItsStateAlone() async throws {
            try await withCluster(Self.topology) { cluster in
                func send(_ address: String, _ event: String) async throws -> String {
                    let sent = try await cluster.fsmSend(["send", address, event, "--no-retry"])
                    #expect(sent.status == 0, "\(sent)")
                    return sent.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
                }
                #expect(try await send("notes/r1", #"{"add":{"_0":4}}"#) == #"{"count":4}"#)
                #expect(try await send("notes/r1", "increment") == #"{"count":5}"#)
                #expect(try await send("notes/r2", "increment") == #"{"count":1}"#)
                #expect(cluster.log.contains("the idle instances of notes rest as their state alone"), "\(cluster.log.suffix(2000))")
                let refused = try await cluster.fsmSend(["send", "notes/r1", #"{"add":{"_0":"x"}}"#, "--no-retry"])
                #expect(refused.status == 2 && refused.stderr.contains("undecodable-event at notes/r1"), "\(refused)")
                let watcher = try await cluster.watch(["state:notes/r1"])
                #expect(try await send("notes/r1", "increment") == #"{"count":6}"#)
                try await waitUntil("the watcher to see notes/r1 at 6", timeout: .seconds(10)) {
                    watcher.states(of: "notes/r1").contains(json(#"{"count":6}"#))
                }
                #expect(try await cluster.state("notes/r2") == json(#"{"count":1}"#))
                #expect(try await cluster.send("notes/r2", "increment") == json(#"{"count":2}"#))
                #expect(try await send("notes/r2", "increment") == #"{"count":3}"#)
                // Idle for `scratch`'s 200 ms, one leaves: not durable, its key starts afresh.
                #expect(try await send("scratch/r3", #"{"add":{"_0":9}}"#) == #"{"count":9}"#)
                try await cluster.waitForLog("passivated", "not durable dropped", timeout: .seconds(20))
                try await waitUntil("scratch/r3 to leave memory and start afresh", timeout: .seconds(20)) {
                    try await send("scratch/r3", "increment") == #"{"count":1}"#
                }
            }
        }

        @Test func aPassivatedPollerIsWokenForItsTimer() async throws {
            try await withCluster(Self.topology) { cluster in
                let watcher = try await cluster.watch(["state:poller/eu"])
                #expect(try await cluster.send("poller/eu", #"{"startPolling":{"interval":1}}"#).caseName == "polling")
                try await cluster.waitForLog("passivated", "1 passivated waiting for a timer", timeout: .seconds(20))
                // Its timer still runs while it is passivated between polls: lastUpdate moves on.
                try await waitUntil("poller/eu to poll three times while passivated between polls", timeout: .seconds(20)) {
                    Set(watcher.states(of: "poller/eu").compactMap { $0["polling"]?["lastUpdate"] }).count >= 3
                }
                let poller = try await cluster.state("poller/eu")
                #expect(poller["polling"]?["interval"] == json("1"), "\(poller)")
            }
        }
    }
}
