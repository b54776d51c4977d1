import Foundation
import GroveWire
import Testing

extension EndToEnd {
    /// An external worker outlives its coordinator: killed with SIGKILL, the coordinator leaves
    /// the worker's remote io calls unanswerable, so the worker fails them once the coordinator
    /// has been silent for the heartbeat timeout; it keeps its machines and registers again
    /// with the coordinator started next on the same endpoints. Over ipc.
    @Suite(.timeLimit(.minutes(2)))
    struct CoordinatorLossTests {
        static let topology = TopologyFile(
            name: "coordinator-loss", transport: .ipc,
            workers: [.init(name: "data-io", arguments: ["--io-delay-ms", "60000"]), .init(name: "outside", external: true)],
            machines: [.init(name: "loader", type: "DataLoader", worker: "outside"),
                       .init(name: "counter", type: "Counter", worker: "outside"),
                       .init(name: "tally", type: "Counter", worker: "outside", keyed: true)],
            io: [("FetchItems", "data-io")],
            ioMachines: ["FetchItems": ["loader"]],   // loader is on an external group
            heartbeat: (intervalMs: 100, timeoutMs: 1000)
        )

        @Test func anExternalWorkerFailsItsRemoteCallsAndKeepsItsMachinesAcrossACoordinatorRestart() async throws {
            try await withCluster(Self.topology) { cluster in
                let worker = try #require(cluster.externalWorker("outside"))
                #expect(try await cluster.send("counter", #"{"add":{"_0":5}}"#) == json(#"{"count":5}"#))
                #expect(try await cluster.send("tally/a", "increment") == json(#"{"count":1}"#))
                let watcher = try await cluster.watch(["effect:loader"])
                #expect(try await cluster.send("loader", "load") == loading)
                try await watcher.waitFor("the fetch to start on data-io") { $0.isEffect("loader", "started") }
                let spawned = ProcessTable.children(of: cluster.launch.pid)

                cluster.launch.signal(SIGKILL)
                let killedAt = ContinuousClock.now

                // Once the coordinator has been silent for the heartbeat timeout (1 s), the worker
                // gives up on the fetch its machine waits for: nobody is left to bring the result.
                // Which rule decided is the verdict, not how soon: the worker names its heartbeat
                // timeout, and the wait's bound (10 s) is far short of the fetch's 60 s, so only
                // the silence can end it in time. (When is a measurement: a loaded machine delays it.)
                try await waitUntil("the external worker to fail its remote call", timeout: .seconds(10)) {
                    worker.stderr.contains("failed 1 pending remote io call(s): coordinator-lost")
                }
                print("coordinator loss: the external worker failed its remote call \(ContinuousClock.now - killedAt) after the kill")
                let workers = "ipc://\(cluster.directory.path)/workers.ipc"  // an ipc topology: known without asking the coordinator, which is gone
                #expect(worker.stderr.contains("the coordinator at \(workers) was silent for"), "\(worker.stderr)")
                #expect(worker.stderr.contains("(heartbeat timeout 1000 ms)"), "noticed by its heartbeat timeout: \(worker.stderr)")
                #expect(worker.isRunning, "an external worker outlives its coordinator")
                // The killed launcher's own workers exit with it (they watch their parent).
                try await waitUntil("fsm-launch's workers to exit with it", timeout: .seconds(10)) {
                    spawned.allSatisfy { !ProcessTable.isAlive($0) }
                }

                // A coordinator comes back on the same endpoints: `ready` only once every worker,
                // the external one included, has registered.
                let successor = try await ChildProcess(Products.launch, [cluster.directory.appendingPathComponent("topology.json").path],
                                                 outputIn: cluster.directory, label: "fsm-launch-again")
                defer { successor.stop() }
                try await waitUntil("the new coordinator to be ready", timeout: .seconds(30)) {
                    if let status = successor.exitStatus {
                        throw HarnessError("the new fsm-launch exited with \(status):\n\(successor.stderr.suffix(3000))")
                    }
                    return successor.stdout.contains("ready ")
                }
                try await waitUntil("the worker to say it registered again", timeout: .seconds(5)) {
                    worker.stderr.contains("registered again with the coordinator")
                }

                // Its machines are the ones it had: state kept, the failure delivered.
                #expect(try await cluster.state("counter") == json(#"{"count":5}"#))
                #expect(try await cluster.state("tally/a") == json(#"{"count":1}"#), "a keyed instance is kept too")
                let failed = try await cluster.state("loader")
                #expect(failed["error"]?["canRetry"] == .bool(true), "\(failed)")
                #expect(failed["error"]?["message"]?.stringValue?.contains("was silent for") == true, "\(failed)")
                #expect(try await cluster.send("counter", "increment") == json(#"{"count":6}"#))
            }
        }

        /// SIGSTOP past the timeout, then SIGCONT: the coordinator declared the worker lost and
        /// answers it `unavailable`; it registers again, and its machines are still the ones it had.
        @Test func aWorkerStoppedPastTheTimeoutRegistersAgainWithItsMachines() async throws {
            try await withCluster(Self.topology) { cluster in
                let worker = try #require(cluster.externalWorker("outside"))
                #expect(try await cluster.send("counter", #"{"add":{"_0":7}}"#) == json(#"{"count":7}"#))
                #expect(try await cluster.send("tally/b", "increment") == json(#"{"count":1}"#))
                let watcher = try await cluster.watch(["worker:outside"])

                worker.signal(SIGSTOP)
                defer { worker.signal(SIGCONT) }
                try await watcher.waitFor("the stopped worker to be declared lost") { $0.isWorker("outside", "lost") }
                worker.signal(SIGCONT)
                try await watcher.waitFor("the worker to register again") { $0.isWorker("outside", "registered") }

                #expect(try await cluster.state("counter") == json(#"{"count":7}"#), "state kept across the re-registration")
                #expect(try await cluster.state("tally/b") == json(#"{"count":1}"#))
                #expect(try await cluster.send("counter", "increment") == json(#"{"count":8}"#))
                #expect(worker.stderr.contains("registered again with the coordinator"), "\(worker.stderr)")
            }
        }

        /// A worker of fsm-launch's own, its machines without durability.
        static let paused = TopologyFile(
            name: "coordinator-pause", transport: .ipc,
            workers: [.init(name: "w")],
            machines: [.init(name: "counter", type: "Counter", worker: "w"),
                       .init(name: "tally", type: "Counter", worker: "w", keyed: true)],
            heartbeat: (intervalMs: 100, timeoutMs: 1000)
        )

        /// fsm-launch (the coordinator and the supervisor) stopped with SIGSTOP until its worker
        /// has noticed the silence and two timeouts more (about 3 s, the timeout 1 s), then SIGCONT: the worker reconnected and registers again,
        /// nobody kills it, and its machines without durability keep their state. Before, the
        /// coordinator woke to find every worker silent or its old connection gone, and its
        /// supervisor killed each one: every `none` machine started over.
        @Test func aStoppedCoordinatorKeepsItsWorkersAndTheirMachines() async throws {
            try await withCluster(Self.paused) { cluster in
                #expect(try await cluster.send("counter", #"{"add":{"_0":5}}"#) == json(#"{"count":5}"#))
                #expect(try await cluster.send("tally/a", "increment") == json(#"{"count":1}"#))
                let pid = try await cluster.workerPID("w")

                cluster.launch.signal(SIGSTOP)
                defer { cluster.launch.signal(SIGCONT) }
                // The worker's own log reaches the test directly (it shares fsm-launch's stderr).
                try await cluster.waitForLog("the coordinator at", "was silent for", timeout: .seconds(10))
                // The stimulus, not a wait for something: the coordinator stays stopped two
                // timeouts more, so that, woken, it finds its worker silent for three.
                try await Task.sleep(for: .seconds(2))
                cluster.launch.signal(SIGCONT)
                try await cluster.waitForLog("registered again with the coordinator", timeout: .seconds(10))

                #expect(try await cluster.state("counter") == json(#"{"count":5}"#), "state kept across the pause")
                #expect(try await cluster.state("tally/a") == json(#"{"count":1}"#))
                #expect(try await cluster.send("counter", "increment") == json(#"{"count":6}"#))
                #expect(try await cluster.workerPID("w") == pid, "the same process: not killed")
                let kills = cluster.log.split(separator: "\n").filter { $0.contains("SIGKILL") }
                #expect(kills.isEmpty, "\(kills.joined(separator: "\n"))")
            }
        }
    }
}
