import Foundation
import GroveWire
import Testing

extension EndToEnd {
    /// fsm-load against a running topology: every event it sends is accounted for (acknowledged,
    /// failed by code, or lost), and `--json` is a report machines can read. Counts only; no
    /// timing is asserted.
    @Suite(.timeLimit(.minutes(2)))
    struct LoadToolTests {
        static let topology = TopologyFile(
            name: "load-tool", transport: .ipc,
            workers: [.init(name: "bench", count: 2)],
            machines: [.init(name: "counter", type: "Counter", worker: "bench", keyed: true),
                       .init(name: "sink", type: "Counter", worker: "bench"),
                       // Not a Counter: fsm-load's events do not decode as its events.
                       .init(name: "form", type: "UserForm", worker: "bench", keyed: true)]
        )

        struct Report: Decodable {
            struct Run: Decodable {
                var mode: String
                var sent: Int
                var messages: Int
                var acknowledged: Int
                var failed: Int
                var lost: Int
                var errors: [String: Int]
                var latencyMicros: [String: UInt64]
                var cpuSeconds: [String: Double]
                var shareOfRaw: Double?
                var p50OverRaw: Double?
            }
            struct Spawn: Decodable {
                var instances: Int
                var bytesPerInstance: Double
            }
            var runs: [Run]
            var spawn: Spawn?
            var machine: String
            var codec: String
            var batch: Int
            var rate: Double?
            var lingerMicros: Int?
            var warmupSeconds: Double?
            var countPerConnection: Int?
        }

        /// The keyed `counter` instances `fsm-send list` reports.
        static func counterInstances(_ cluster: Cluster) async throws -> [JSONValue] {
            let listing = try await cluster.json(["list"])
            guard listing["machines"] != nil else { throw HarnessError("fsm-send list has no machines: \(listing)") }
            return counterInstances(in: listing)
        }

        static func counterInstances(in listing: JSONValue) -> [JSONValue] {
            guard case .array(let machines)? = listing["machines"],
                  let counter = machines.first(where: { $0["name"]?.stringValue == "counter" }),
                  case .array(let instances)? = counter["instances"] else { return [] }
            return instances
        }

        func load(_ cluster: Cluster, _ arguments: [String], status: Int32 = 0, stderr: String = "") async throws -> Report {
            let result = try await runCommand(Products.load, ["--endpoint", cluster.clients, "--json"] + arguments,
                                              in: cluster.directory, timeout: .seconds(60))
            #expect(result.status == status, "fsm-load exited \(result.status): \(result.stderr)")
            #expect(stderr.isEmpty || result.stderr.contains(stderr), "\(result.stderr)")
            return try JSONDecoder().decode(Report.self, from: Data(result.stdout.utf8))
        }

        @Test(arguments: [("json", "1"), ("binary", "25")])
        func everyEventIsAcknowledgedInEveryMode(codec: String, batch: String) async throws {
            try await withCluster(Self.topology) { cluster in
                let report = try await load(cluster, ["--mode", "ack,reply", "--count", "400", "--machines", "30",
                                                      "--codec", codec, "--batch", batch, "--window", "100"])
                #expect(report.runs.map(\.mode) == ["raw", "ack", "reply"])
                #expect(report.codec == codec)
                #expect(report.machine == "counter")
                for run in report.runs {
                    #expect(run.sent == 800, "\(run.mode)")           // 2 connections × 400
                    #expect(run.acknowledged == run.sent, "\(run.mode): \(run.errors)")
                    #expect(run.failed == 0 && run.lost == 0, "\(run.mode)")
                    #expect(run.latencyMicros["p50"] != nil && run.latencyMicros["p999"] != nil)
                    #expect(run.cpuSeconds.keys.contains("coordinator"), "\(run.cpuSeconds)")
                }
                #expect(report.runs.filter { $0.mode != "raw" }.allSatisfy { $0.shareOfRaw != nil })
                #expect(report.runs.allSatisfy { $0.p50OverRaw == nil })
                #expect(report.countPerConnection == 400)
                // The events reached the machines: 30 keyed instances exist, and each counted
                // what it got (800 events of ack and reply, round robin over 30 addresses).
                let instances = try await Self.counterInstances(cluster)
                #expect(instances.count == 30)
                var total: Int64 = 0
                for index in 0..<30 {
                    if case .integer(let count)? = try await cluster.json(["state", "counter/\(index)"])["count"] { total += count }
                }
                #expect(total == 1600)
            }
        }

        /// A warm-up sends the run's load first and leaves it out of the report: the machines
        /// counted more events than the runs reported.
        @Test func aWarmUpIsSentButNotReported() async throws {
            try await withCluster(Self.topology) { cluster in
                let report = try await load(cluster, ["--mode", "reply", "--warmup", "0.3", "--rate", "200", "--count", "50",
                                                      "--machines", "10"])
                #expect(report.warmupSeconds == 0.3)
                #expect(report.runs.map(\.mode) == ["raw", "reply"])
                let reply = try #require(report.runs.last)
                #expect(reply.sent == 100 && reply.acknowledged == 100 && reply.lost == 0, "\(reply)")
                var total: Int64 = 0
                for index in 0..<10 {
                    if case .integer(let count)? = try await cluster.json(["state", "counter/\(index)"])["count"] { total += count }
                }
                // The reply run's 100, and its warm-up's schedule, 200 a second for 0.3 s: 60 (the
                // raw run's echoes count nothing).
                #expect(total == 160, "the machines counted \(total) events")
            }
        }

        /// A warm-up whose every event is refused stops fsm-load and says why, after reporting the
        /// runs already made.
        @Test func aWarmUpWhoseEventsAreAllRefusedStopsWithTheReason() async throws {
            try await withCluster(Self.topology) { cluster in
                let report = try await load(cluster, ["--mode", "ack", "--warmup", "0.2", "--rate", "100", "--count", "10",
                                                      "--machine", "form", "--machines", "3"], status: 1,
                                            stderr: "every event of the warm-up before the ack run was refused (undecodable-event=20); fsm-load sends note(String)")
                #expect(report.runs.map(\.mode) == ["raw"], "the raw baseline made before it is reported")
            }
        }

        @Test func refusedEventsAreCountedAsFailedByCode() async throws {
            try await withCluster(Self.topology) { cluster in
                // Every event refused: the report still prints, and the exit status says so.
                let report = try await load(cluster, ["--mode", "ack,reply", "--no-baseline", "--count", "50",
                                                      "--machine", "form", "--machines", "3", "--batch", "10"], status: 1,
                                            stderr: "every event of the ack run was refused (undecodable-event=100); fsm-load sends note(String)")
                #expect(report.runs.map(\.mode) == ["ack", "reply"])
                for run in report.runs {
                    #expect(run.sent == 100)
                    #expect(run.failed == 100 && run.acknowledged == 0 && run.lost == 0)
                    #expect(run.errors == ["undecodable-event": 100])
                }
            }
        }

        @Test func spawnStartsOneInstancePerEventAndReportsTheirMemory() async throws {
            try await withCluster(Self.topology) { cluster in
                let report = try await load(cluster, ["--spawn", "500", "--mode", "ack", "--no-baseline", "--count", "10",
                                                      "--machines", "5", "--batch", "50"])
                #expect(report.spawn?.instances == 500)
                let instances = try await Self.counterInstances(cluster)
                #expect(instances.count == 505) // 500 spawned, 5 driven
            }
        }

        /// Issue 34: 100,000 instances with 1 KiB keys made one `list` a 100 MB reply that stalled
        /// the coordinator. A listing holds a page of 1,000 and the count; the rest are paged.
        @Test func aListingHoldsAThousandInstancesAndPagesTheRest() async throws {
            try await withCluster(Self.topology) { cluster in
                let report = try await load(cluster, ["--spawn", "1200", "--mode", "ack", "--no-baseline", "--count", "10",
                                                      "--machines", "5", "--batch", "50"])
                #expect(report.spawn?.instances == 1200)
                let listing = try await cluster.json(["list"])
                #expect(Self.counterInstances(in: listing).count == 1000)
                guard case .array(let machines)? = listing["machines"],
                      let counter = machines.first(where: { $0["name"]?.stringValue == "counter" }) else {
                    Issue.record("no counter in \(listing)")
                    return
                }
                #expect(counter["instanceCount"] == .integer(1205) || counter["instanceCount"] == .number(1205), "\(String(describing: counter["instanceCount"]))")
                let all = try await cluster.fsmSend(["list", "--instances", "counter"])
                let lines = all.stdout.split(separator: "\n")
                #expect(all.status == 0 && lines.count == 1205 && Set(lines).count == 1205, "\(all.status) \(lines.count)")
            }
        }

        /// A single machine is one address: asking for several of it is refused, not ignored;
        /// without --machines it is driven as its one address.
        @Test func severalAddressesOfASingleMachineAreRefused() async throws {
            try await withCluster(Self.topology) { cluster in
                let refused = try await runCommand(Products.load, ["--endpoint", cluster.clients, "--machine", "sink", "--machines", "5",
                                                                   "--count", "5"], in: cluster.directory)
                #expect(refused.status == 1)
                #expect(refused.stderr.contains("--machines 5 needs a keyed machine; 'sink' is single"), "\(refused.stderr)")
                let report = try await load(cluster, ["--machine", "sink", "--mode", "ack", "--no-baseline", "--count", "5"])
                #expect(report.runs.map(\.sent) == [10])  // --count is per connection, two by default
            }
        }

        @Test func aPacedRunComparesRoundTripsNotRates() async throws {
            try await withCluster(Self.topology) { cluster in
                let report = try await load(cluster, ["--mode", "reply", "--rate", "2000", "--count", "200", "--machines", "10"])
                #expect(report.rate == 2000)
                let reply = try #require(report.runs.first { $0.mode == "reply" })
                #expect(reply.acknowledged == 400 && reply.lost == 0)
                #expect(reply.shareOfRaw == nil)
                #expect(reply.p50OverRaw != nil)
            }
        }

        /// A timed paced run sends exactly its schedule, one event per message without batching.
        @Test func aTimedPacedRunSendsItsWholeSchedule() async throws {
            try await withCluster(Self.topology) { cluster in
                let report = try await load(cluster, ["--mode", "ack", "--no-baseline", "--rate", "1000", "--duration", "1", "--machines", "10"])
                let ack = try #require(report.runs.first)
                #expect(ack.sent == 1000 && ack.acknowledged == 1000 && ack.lost == 0, "\(ack)")  // 2 connections × 500 a second
                #expect(ack.messages == 1000)
            }
        }

        /// With --linger, what falls due leaves in full batches; what is held when a timed run
        /// ends leaves then: the whole schedule is sent and answered.
        @Test func aLingeringPacedRunSendsFullBatchesAndItsWholeSchedule() async throws {
            try await withCluster(Self.topology) { cluster in
                let report = try await load(cluster, ["--mode", "reply", "--codec", "binary", "--rate", "2000", "--duration", "1",
                                                      "--machines", "10", "--batch", "50", "--linger", "200000"])
                #expect(report.lingerMicros == 200000)
                #expect(report.runs.map(\.mode) == ["raw", "reply"])
                for run in report.runs {
                    #expect(run.sent == 2000 && run.acknowledged == 2000 && run.lost == 0, "\(run.mode): \(run.errors)")
                    // Never more than 50 events a message, so at least 40 messages; held events
                    // left together, so fewer than one a message. How close to 40 it comes
                    // depends on the machine's pace (a connection stalled past the linger sends
                    // a short batch): that is a benchmark's number, not this test's.
                    #expect(run.messages >= 40 && run.messages < 2000, "\(run.mode): \(run.messages) messages")
                }
            }
        }

        @Test(arguments: [
            (["--linger", "500", "--batch", "20"], "--linger holds events of a paced run; add --rate"),
            (["--linger", "500", "--rate", "100"], "add --batch above 1"),
            (["--linger", "-3", "--rate", "100", "--batch", "20"], "--linger must be from 0 (hold nothing) to 1000000 microseconds, got -3"),
            (["--count", "0"], "--count must be at least 1"),
            (["--mode", ","], "empty entry"),
            (["--mode", "ack,fast"], "unknown mode 'fast'"),
            (["--route", "direct,,"], "--route has an empty entry"),
            (["--route", "coordinator,fast"], "unknown road 'fast'; use coordinator or direct"),
            (["--payload-size", "2000000"], "at most 1048576"),
            (["--codec", "xml"], "--codec must be json or binary"),
            (["--batch", "0"], "--batch must be at least 1"),
            (["--batch", "5000"], "--batch 5000 is above --window 1000"),
            // A topology refuses a batch of more envelopes than limits.batchEnvelopes (10,000 by default).
            (["--batch", "10001", "--window", "20000"], "--batch 10001 is above 10000, the most envelopes a topology accepts in one batch"),
            // A negative number is read as the option's value, not as an unknown option.
            (["--duration", "-1"], "--duration must be a positive number of seconds"),
            (["--duration", "inf"], "--duration must be a positive number of seconds"),
            (["--duration", "1e300"], "--duration must be at most 1000000 seconds"),
            (["--rate", "-5"], "--rate must be a positive number of events per second"),
            (["--rate", "1e-300"], "--rate must be at least 0.001 events per second"),
            (["--connections", "-2"], "--connections must be at least 1"),
            (["--warmup", "-1"], "--warmup must be 0 (none) or from 0.001 to 3600 seconds, got -1"),
            (["--warmup", "nan"], "--warmup must be 0 (none) or from 0.001 to 3600 seconds, got nan"),
            (["--warmup", "1e-300"], "got 1e-300"),
            (["--warmup", "4000"], "got 4000"),
        ])
        func badOptionsAreRefusedBeforeAnythingRuns(arguments: [String], says: String) async throws {
            let directory = try Cluster.makeDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let result = try await runCommand(Products.load, ["--endpoint", "ipc://\(directory.path)/nobody"] + arguments, in: directory)
            #expect(result.status == 64)
            #expect(result.stderr.contains(says), "\(result.stderr)")
        }

        /// The process ids whose parent is `pid`, from /proc.
        static func children(of pid: Int32) -> [Int32] {
            let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
            return tasks.flatMap { task in
                ((try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/children", encoding: .utf8)) ?? "")
                    .split(separator: " ").compactMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
            }
        }

        /// Whether `pid` still runs: a zombie (exited, not yet reaped by whoever inherited it) has
        /// ended.
        static func alive(_ pid: Int32) -> Bool {
            guard kill(pid, 0) == 0 else { return false }
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { return true }
            return !stat[close...].hasPrefix(") Z")
        }

        /// SIGTERM to an fsm-load that launched its own topology stops that topology too: no
        /// fsm-launch or worker is left holding the endpoints. So does SIGKILL, which fsm-load
        /// cannot handle: its fsm-launch notices that its parent is gone.
        @Test(arguments: [SIGTERM, SIGKILL])
        func endingFsmLoadStopsTheTopologyItLaunched(signal: Int32) async throws {
            let directory = try Cluster.makeDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let file = try Self.topology.write(in: directory)
            let load = try await ChildProcess(Products.load, [file.path, "--duration", "60", "--no-baseline"], outputIn: directory, label: "fsm-load")
            defer { _ = load.stop(grace: .seconds(1)) }
            // Wait until fsm-launch and its workers run.
            let launch = try await eventually("fsm-load's fsm-launch and its workers", timeout: .seconds(30)) { () -> Int32? in
                guard let launch = Self.children(of: load.pid).first, Self.children(of: launch).count >= 2 else { return nil }
                return launch
            }
            let workers = Self.children(of: launch)
            // And until fsm-load drives it (instances exist): fsm-launch has printed its ready
            // line, so it is not ended by writing it to a pipe nobody reads any more.
            let clients = "ipc://\(directory.path)/clients.ipc"
            _ = try await eventually("fsm-load's events to spawn counter instances", timeout: .seconds(30)) { () -> Bool? in
                guard let list = try? await runCommand(Products.send, ["list", "--endpoint", clients], in: directory, timeout: .seconds(5)),
                      list.status == 0, let listing = try? JSONValue(parsing: Data(list.stdout.utf8)) else { return nil }
                return Self.counterInstances(in: listing).isEmpty ? nil : true
            }
            load.signal(signal)
            let status = await load.waitForExit(timeout: .seconds(15))
            #expect(status != nil, "fsm-load did not exit on signal \(signal)")
            let gone = try? await eventually("fsm-launch and its workers to exit", timeout: .seconds(10)) { () -> Bool? in
                ([launch] + workers).contains(where: Self.alive) ? nil : true
            }
            #expect(gone == true, "left running: \(([launch] + workers).filter(Self.alive))")
            for pid in [launch] + workers where Self.alive(pid) { kill(pid, SIGKILL) }  // after a failure
        }

        /// fsm-launch told that a process which is not (or no longer) its parent launched it, as
        /// when fsm-load dies before fsm-launch first looks, stops at once: no topology is left.
        @Test func fsmLaunchWhoseParentIsAlreadyGoneStops() async throws {
            let directory = try Cluster.makeDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let file = try Self.topology.write(in: directory)
            // At info level fsm-launch logs each worker it starts: none may start.
            let launch = try await ChildProcess(Products.launch, [file.path, "--exit-with-parent", "--parent-pid", "1", "--log-level", "info"],
                                          outputIn: directory, label: "fsm-launch")
            defer { _ = launch.stop(grace: .seconds(1)) }
            // Note the workers it spawns meanwhile, to check that they go too.
            var workers = Set<Int32>()
            let deadline = ContinuousClock.now + .seconds(15)
            while launch.isRunning, ContinuousClock.now < deadline {
                workers.formUnion(Self.children(of: launch.pid))
                try await Task.sleep(for: .milliseconds(10))
            }
            let status = await launch.waitForExit(timeout: .seconds(1))
            #expect(status == 0, "fsm-launch did not stop by itself: \(launch.stderr)")
            // It stopped on the --parent-pid check before starting anything, not later through
            // the watch on its real parent (which would have started the workers first).
            #expect(workers.isEmpty, "workers started: \(workers)")
            #expect(!launch.stderr.contains("worker started"), "\(launch.stderr)")
            #expect(!launch.stdout.contains("ready"), "\(launch.stdout)")
            let gone = try? await eventually("its workers to exit", timeout: .seconds(10)) { () -> Bool? in
                workers.contains(where: Self.alive) ? nil : true
            }
            #expect(gone == true, "left running: \(workers.filter(Self.alive))")
            for pid in workers where Self.alive(pid) { kill(pid, SIGKILL) }  // after a failure
        }

        /// fsm-launch killed with SIGKILL while its workers start up leaves no worker behind: each
        /// got fsm-launch's pid on its command line, so one that looks for its parent only after
        /// fsm-launch is gone still notices.
        @Test func killingFsmLaunchWhileWorkersStartLeavesNoOrphans() async throws {
            let directory = try Cluster.makeDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let file = try Self.topology.write(in: directory)
            let launch = try await ChildProcess(Products.launch, [file.path], outputIn: directory, label: "fsm-launch")
            defer { _ = launch.stop(grace: .seconds(1)) }
            // Polled every millisecond: the kill must come before the worker first looks for its parent.
            let workers = try await eventually("fsm-launch's first worker", timeout: .seconds(30), interval: .milliseconds(1)) { () -> [Int32]? in
                let children = Self.children(of: launch.pid)
                return children.isEmpty ? nil : children
            }
            launch.signal(SIGKILL)
            let gone = try? await eventually("its workers to exit", timeout: .seconds(10)) { () -> Bool? in
                workers.contains(where: Self.alive) ? nil : true
            }
            #expect(gone == true, "left running: \(workers.filter(Self.alive))")
            for pid in workers where Self.alive(pid) { kill(pid, SIGKILL) }  // after a failure
        }

        @Test func helpExplainsEveryOption() async throws {
            let directory = try Cluster.makeDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let help = try await runCommand(Products.load, ["--help"], in: directory)
            #expect(help.status == 0)
            for option in ["--endpoint", "--mode", "--no-baseline", "--connections", "--machine ", "--machines", "--payload-size",
                           "--duration", "--count", "--window", "--batch", "--linger", "--warmup", "--codec", "--rate", "--spawn", "--json"] {
                #expect(help.stdout.contains(option), "\(option) is not in fsm-load --help")
            }
            #expect(help.stdout.contains("Exit status"), "fsm-load --help does not give its exit statuses")
        }
    }
}
