import Foundation
import GroveWire
import Testing

extension EndToEnd {
    /// Issue 37 item 4, at start: a worker whose store holds 1,000 idle keyed instances of a
    /// passivating machine restarts with only those that must run (a timer), and the
    /// coordinator still counts the others, which come back on their next event.
    @Suite(.timeLimit(.minutes(3)))
    struct PassivationRestartTests {
        static let topology = {
            var topology = TopologyFile(
                name: "passivation-restart", transport: .ipc,
                workers: [.init(name: "edge"), .init(name: "data-io")],
                // Long enough that every counter is still in memory when the worker is killed.
                machines: [.init(name: "counters", type: "Counter", worker: "edge", keyed: true, durability: "state", passivateAfterMs: 600_000),
                           .init(name: "poller", type: "PollingService", worker: "edge", keyed: true, durability: "state",
                                 passivateAfterMs: 600_000)],
                io: [("FetchData", "data-io")]
            )
            // Spawning a thousand instances in a debug build on a busy machine is not what
            // this is about: no worker is declared lost for it.
            topology.heartbeat = (intervalMs: 250, timeoutMs: 10_000)
            return topology
        }()

        @Test func aRestartedWorkerBringsBackOnlyTheInstanceWithATimerAndStillReportsTheThousand() async throws {
            try await withCluster(Self.topology) { cluster in
                // counters/0 ... counters/999, one event each.
                let load = try await ChildProcess(
                    Products.load, ["--endpoint", cluster.clients, "--machine", "counters", "--machines", "1000", "--mode", "ack",
                                    "--no-baseline", "--connections", "2", "--count", "500", "--batch", "50", "--window", "200"],
                    outputIn: cluster.directory, label: "fsm-load")
                let status = await load.waitForExit(timeout: .seconds(60))
                #expect(status == 0, "fsm-load: \(load.stdout)\n\(load.stderr)")
                #expect(try await cluster.send("poller/eu", #"{"startPolling":{"interval":1}}"#).caseName == "polling")
                try await waitUntil("the coordinator to list the thousand counters") {
                    try await cluster.list().machines.first { $0.name == "counters" }?.instanceCount == 1000
                }

                try await cluster.killAndAwaitRestart("edge", timeout: .seconds(20))
                // The poller holds a timer: it comes back at start; the counters stay in the store.
                try await cluster.waitForLog("bringing back 1 durable instance(s)", timeout: .seconds(20))
                #expect(!cluster.log.contains("bringing back 1001"), "\(cluster.log)")
                // The coordinator lost edge's instances with it, and is told them again from the store.
                try await waitUntil("the coordinator to list the thousand counters again") {
                    try await cluster.list().machines.first { $0.name == "counters" }?.instanceCount == 1000
                }
                // One comes back on its next event, its count kept.
                let count = try await cluster.state("counters/417")["count"]
                #expect(count == json("1"), "\(String(describing: count))")
                #expect(try await cluster.send("counters/417", "increment") == json(#"{"count":2}"#))
                let poller = try await cluster.state("poller/eu")
                #expect(poller["polling"]?["interval"] == json("1"), "\(poller)")
            }
        }
    }
}
