import Foundation
import GroveWire
import Testing

extension EndToEnd {
    /// Scenario 28: a worker killed with effects in flight. Their machines receive a failure,
    /// not a hang; the coordinator reports the loss, keeps serving every other machine, and
    /// fsm-launch restarts the worker, which then serves again. Over tcp.
    @Suite(.timeLimit(.minutes(2)))
    struct WorkerLossTests {
        static let topology = TopologyFile(
            name: "worker-loss", transport: .tcp,
            workers: [.init(name: "edge"), .init(name: "side"), .init(name: "data-io", arguments: ["--io-delay-ms", "1500"])],
            machines: [.init(name: "loader", type: "DataLoader", worker: "edge", keyed: true),
                       .init(name: "counter", type: "Counter", worker: "side", keyed: true)],
            io: [("FetchItems", "data-io")]
        )

        @Test func killingTheIOWorkerFailsItsEffectsAndItComesBack() async throws {
            try await withCluster(Self.topology) { cluster in
                let watcher = try await cluster.watch()
                for loader in ["loader/1", "loader/2"] { try await cluster.send(loader, "load") }
                try await watcher.waitFor("both fetches to start", count: 2) { $0.topic.hasPrefix("effect:loader/") && $0.phase == "started" }
                let victim = try await cluster.workerPID("data-io")

                kill(victim, SIGKILL)

                // The coordinator reports the worker and each of its calls as lost...
                let lost = try await watcher.waitFor("data-io to be reported lost") { $0.isWorker("data-io", "lost") }
                #expect(lost.first?.reason?.isEmpty == false)
                for loader in ["loader/1", "loader/2"] {
                    try await watcher.waitFor("\(loader)'s fetch to be lost") { $0.isEffect(loader, "lost", id: "fetch-items") }
                    // ...and each machine gets a failure it can act on, instead of loading forever.
                    let failed = try await cluster.waitForState(loader, "failed") { $0.caseName == "error" }
                    #expect(failed["error"]?["canRetry"] == .bool(true), "\(failed)")
                }

                // Everything else goes on.
                #expect(try await cluster.send("counter/x", "increment") == json(#"{"count":1}"#))
                #expect(try await cluster.send("loader/3", "dismiss") == idle, "the machines' own worker still answers")

                // fsm-launch restarts the worker under the same name, and it serves again.
                try await watcher.waitFor("data-io to register again") { event in
                    event.isWorker("data-io", "registered")
                }
                let successor = try await cluster.workerPID("data-io")
                #expect(successor != victim)
                #expect(!ProcessTable.isAlive(victim))
                #expect(try await cluster.send("loader/1", "retry") == loading)
                try await cluster.waitForState("loader/1", "loaded after the restart") { $0 == loadedDemoItems }
                let completed = watcher.effects(of: "loader/1", "completed")
                #expect(completed.count == 1)
                #expect(try await cluster.send("counter/x", "increment") == json(#"{"count":2}"#))
            }
        }

        @Test func killingTheMachinesWorkerCancelsItsRemoteWork() async throws {
            try await withCluster(Self.topology) { cluster in
                let watcher = try await cluster.watch()
                try await cluster.send("counter/y", #"{"add":{"_0":5}}"#)
                try await cluster.send("loader/k", "load")
                try await watcher.waitFor("the fetch to start") { $0.isEffect("loader/k", "started") }
                let victim = try await cluster.workerPID("edge")

                kill(victim, SIGKILL)

                try await watcher.waitFor("edge to be reported lost") { $0.isWorker("edge", "lost") }
                // Nobody is left to receive the fetch's result: the coordinator cancels it on the io worker.
                try await watcher.waitFor("the orphaned fetch to be lost") { $0.isEffect("loader/k", "lost", id: "fetch-items") }
                try await cluster.waitForLog("io request cancelled", "machine=loader/k")

                // Machines on other workers are untouched, state included.
                #expect(try await cluster.send("counter/y", "increment") == json(#"{"count":6}"#))

                // The restarted edge hosts its machines again.
                try await watcher.waitFor("edge to register again") { $0.isWorker("edge", "registered") }
                #expect(try await cluster.workerPID("edge") != victim)
                try await eventually("loader/k to accept events again", timeout: .seconds(15)) { () -> JSONValue? in
                    let result = try await cluster.fsmSend(["loader/k", "dismiss"]) // an event: a read does not spawn
                    return result.status == 0 ? try JSONValue(parsing: Data(result.stdout.utf8)) : nil
                }
                // A fetch started now takes as long as the orphaned one would have; once it is
                // through, the orphaned one would have been too.
                try await cluster.send("loader/sentinel", "load")
                try await cluster.waitForState("loader/sentinel", "loaded") { $0 == loadedDemoItems }
                #expect(watcher.effects(of: "loader/k", "completed").isEmpty, "the orphaned fetch delivered")
            }
        }
    }
}
