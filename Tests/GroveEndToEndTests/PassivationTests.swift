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
