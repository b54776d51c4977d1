import Foundation
import GroveWire
import Testing

extension EndToEnd {
    /// Issue 21: durable machines come back where they were after their worker is killed
    /// (kill -9), stopped (SIGSTOP, then killed by its supervisor) or their fsm-launch is killed
    /// and launched again. Over ipc, durability `state`, the store in the test's directory.
    @Suite(.timeLimit(.minutes(2)))
    struct DurabilityTests {
        /// auth-loading-polling with its machines durable.
        static let authLoadingPolling = TopologyFile(
            name: "durable-alp", transport: .ipc,
            workers: [.init(name: "edge"), .init(name: "auth-io"), .init(name: "data-io")],
            machines: [.init(name: "auth", type: "AuthFlow", worker: "edge", durability: "state"),
                       .init(name: "loader", type: "DataLoader", worker: "edge", durability: "state"),
                       .init(name: "poller", type: "PollingService", worker: "edge", keyed: true, durability: "state")],
            io: [("Authenticate", "auth-io"), ("VerifyTwoFactor", "auth-io"), ("FetchItems", "data-io"), ("FetchData", "data-io")],
            routes: [.init(from: "auth", when: "signedIn", to: "loader", event: "load")]
        )

        /// A durable counter and a keyed family on one worker, with one of each that is not.
        static let counters = TopologyFile(
            name: "durable-counters", transport: .ipc,
            workers: [.init(name: "w")],
            machines: [.init(name: "counter", type: "Counter", worker: "w", durability: "state"),
                       .init(name: "counters", type: "Counter", worker: "w", keyed: true, durability: "state"),
                       .init(name: "scratch", type: "Counter", worker: "w")]
        )

        @Test func killingTheEdgeWorkerKeepsTheSignInTheDataAndThePolling() async throws {
            try await withCluster(Self.authLoadingPolling) { cluster in
                try await cluster.login("auth", email: "grace@example.com", password: "compiler")
                try await cluster.waitForState("auth", "asked for a code") { $0.step == "requiresTwoFactor" }
                try await cluster.submitCode("auth", "424242")
                try await cluster.waitForState("auth", "authenticated") { $0.step == "authenticated" }
                try await cluster.waitForState("loader", "loaded by the route", isLoaded)
                #expect(try await cluster.send("poller/eu", #"{"startPolling":{"interval":0.2}}"#).caseName == "polling")

                try await cluster.killAndAwaitRestart("edge", timeout: .seconds(20))
                let auth = try await cluster.state("auth")
                #expect(auth.step == "authenticated", "\(auth)")
                #expect(auth["step"]?["authenticated"]?["_0"] == AuthenticationTests.grace)
                #expect(try await cluster.state("loader") == loadedDemoItems)
                let poller = try await cluster.state("poller/eu")
                #expect(poller["polling"]?["interval"] == json("0.2"), "\(poller)")
                // Its timer runs: the fetches it makes move lastUpdate on.
                let watcher = try await cluster.watch(["state:poller/eu"])
                try await waitUntil("poller/eu to poll twice after the restart") {
                    Set(watcher.states(of: "poller/eu").compactMap { $0["polling"]?["lastUpdate"] }).count >= 2
                }
            }
        }

        /// Adds 5 to `counter`, 3 to `counters/a` and 7 to `scratch`.
        static func fill(_ cluster: Cluster) async throws {
            #expect(try await cluster.send("counter", #"{"add":{"_0":5}}"#) == json(#"{"count":5}"#))
            #expect(try await cluster.send("counters/a", #"{"add":{"_0":3}}"#) == json(#"{"count":3}"#))
            #expect(try await cluster.send("scratch", #"{"add":{"_0":7}}"#) == json(#"{"count":7}"#))
        }

        /// What `fill` left: the durable ones kept, `scratch` started over.
        static func expectFilled(_ cluster: Cluster) async throws {
            #expect(try await cluster.send("counter", "increment") == json(#"{"count":6}"#))
            #expect(try await cluster.send("counters/a", "increment") == json(#"{"count":4}"#))
            #expect(try await cluster.send("scratch", "increment") == json(#"{"count":1}"#))
        }

        @Test func aStoppedWorkerIsRestartedWithItsMachines() async throws {
            try await withCluster(Self.counters) { cluster in
                try await Self.fill(cluster)
                let stopped = try await cluster.workerPID("w")
                kill(stopped, SIGSTOP)
                defer { kill(stopped, SIGCONT) } // in case it was not killed
                try await waitUntil("w to be killed and come back as a new process", timeout: .seconds(30)) {
                    (try? await cluster.workerPID("w")).map { $0 != stopped } ?? false
                }
                try await Self.expectFilled(cluster)
            }
        }

        /// fsm-load checks every acknowledged event against the counters after a worker was
        /// killed in the middle of the run.
        @Test func killingTheWorkerDuringALoadLosesNoAcknowledgedEvent() async throws {
            try await withCluster(Self.counters) { cluster in
                let worker = try await cluster.workerPID("w")
                let load = try await ChildProcess(
                    Products.load, ["--endpoint", cluster.clients, "--machine", "counters", "--machines", "50", "--mode", "ack",
                                    "--no-baseline", "--batch", "100", "--window", "2000", "--duration", "4", "--verify"],
                    outputIn: cluster.directory, label: "fsm-load")
                defer { load.stop(grace: .seconds(1)) }
                try await waitUntil("the load to reach the counters") {
                    guard let count = (try? await cluster.state("counters/0"))?["count"] else { return false }
                    return count != json("0")
                }
                kill(worker, SIGKILL)
                let status = await load.waitForExit(timeout: .seconds(60))
                #expect(load.stdout.contains("every acknowledged event applied, none twice"), "\(load.stdout)\n\(load.stderr)")
                #expect(status == 0, "fsm-load: \(load.stdout)\n\(load.stderr)")
            }
        }

        /// A record changed on disk between two launches (its codec byte, as a bad sector or a
        /// stray tool would) costs its instance only: each event to it gets `unreadable-record`
        /// naming it, the SQLite file and what was wrong, the record stays as it was, and the
        /// worker serves its other machines.
        @Test func aRecordCorruptedOnDiskRefusesItsInstanceOnlyAndStaysAsItWas() async throws {
            let sqlite = URL(fileURLWithPath: "/usr/bin/sqlite3")
            let read = "SELECT hex(snapshot) FROM machines WHERE address = 'counter'"
            var corrupted = ""
            try await withKilledAndRelaunchedCluster(Self.counters, before: Self.fill, between: { directory in
                let file = try Self.store(of: "w", in: directory)
                let stored = try await runCommand(sqlite, [file, read], in: directory).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
                try #require(stored.count > 2, "no record of counter in \(file)")
                // The codec byte (3, the state alone) becomes 0xE7, the rest as it was.
                corrupted = "E7" + stored.dropFirst(2)
                let changed = try await runCommand(sqlite, [file, "UPDATE machines SET snapshot = X'\(corrupted)' WHERE address = 'counter'", read],
                                                   in: directory)
                #expect(changed.status == 0 && changed.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == corrupted, "\(changed)")
            }, after: { (second: Cluster, _: Void) in
                let file = try Self.store(of: "w", in: second.directory)
                for _ in 0..<2 {
                    let refused = try await second.fsmSend(["send", "counter", "increment"])
                    #expect(refused.status != 0, "\(refused)")
                    #expect(refused.stderr.contains("unreadable-record") && refused.stderr.contains("'counter'")
                            && refused.stderr.contains("the SQLite store \(file)") && refused.stderr.contains("unknown codec byte 231")
                            && refused.stderr.contains("Restore the store from a backup"), "\(refused)")
                }
                #expect(try await second.send("counters/a", "increment") == json(#"{"count":4}"#))
                #expect(try await second.send("scratch", "increment") == json(#"{"count":1}"#))
                #expect(second.log.contains("cannot read what the SQLite store \(file) holds for 'counter'"), "\(second.log.suffix(2000))")
                // Left as it was, though the worker wrote counters/a since.
                let after = try await runCommand(sqlite, [file, read], in: second.directory)
                #expect(after.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == corrupted, "\(after)")
            })
        }

        /// The SQLite file of worker `worker` in a cluster's directory.
        static func store(of worker: String, in directory: URL) throws -> String {
            let files = FileManager.default.enumerator(atPath: directory.path)?.compactMap { $0 as? String } ?? []
            let file = try #require(files.first { $0 == "\(worker).sqlite" || $0.hasSuffix("/\(worker).sqlite") }, "\(files)")
            return directory.appendingPathComponent(file).path
        }

        @Test func aRelaunchedTopologyBringsBackItsMachines() async throws {
            try await withKilledAndRelaunchedCluster(Self.counters, before: Self.fill, after: { (second: Cluster, _: Void) in
                try await Self.expectFilled(second)
            })
        }
    }
}
