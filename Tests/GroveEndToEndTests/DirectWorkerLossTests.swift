import Foundation
import GroveWire
import Testing

extension EndToEnd {
    /// Issue 39's first end-to-end promise (docs/DIRECT-ROUTES.md step 4): a load on the direct
    /// road while one of its workers is killed with -9 and restarted by fsm-launch. fsm-load's
    /// leg to the dead worker resends what it got no answer for, with each event's idempotency
    /// key, through the coordinator, and the connection locates the counters again: no event
    /// lost or applied twice, every request answered, and a watcher sees every count of every
    /// driven counter.
    @Suite(.timeLimit(.minutes(3)))
    struct DirectWorkerLossTests {
        static let topology = TopologyFile(
            name: "directloss", transport: .runtimeDirectory,
            workers: [.init(name: "data", count: 2, direct: true)],
            machines: [.init(name: "counter", type: "Counter", worker: "data", keyed: true, durability: "state")]
        )

        static let addresses = 20

        /// The `count` of `address` through the coordinator, nil until it has one.
        static func count(_ cluster: Cluster, _ address: String) async -> Int? {
            (try? await cluster.state(address))?["count"].flatMap(integer)
        }

        static func integer(_ value: JSONValue) -> Int? {
            switch value {
            case .integer(let number): Int(number)
            case .number(let number): Int(exactly: number)
            case .null, .bool, .string, .array, .object: nil
            }
        }

        /// The counts `watcher` saw `address` at, as a set.
        static func countsSeen(_ watcher: EventWatcher, _ address: String) -> Set<Int> {
            Set(watcher.states(of: address).compactMap { $0.objectValue?["count"].flatMap(integer) })
        }

        /// Runs fsm-load on the direct road with `--retry` and `options` over the counters, kills
        /// data-1 with -9 once the run reaches them (past their start through the coordinator),
        /// waits for its new process, then for fsm-load's end.
        /// - Returns: fsm-load's exit status and its process, for its output.
        static func killDataOne(_ cluster: Cluster, during options: [String]) async throws -> (Int32?, ChildProcess) {
            let load = try await ChildProcess(
                Products.load, ["--endpoint", cluster.clients, "--machine", "counter", "--machines", "\(addresses)", "--no-baseline",
                                "--route", "direct", "--retry", "--connections", "1", "--json"] + options,
                outputIn: cluster.directory, label: "fsm-load")
            do {
                try await waitUntil("the direct run to reach the counters", timeout: .seconds(30)) {
                    let first = await count(cluster, "counter/0") ?? 0
                    let second = await count(cluster, "counter/1") ?? 0
                    return first > 3 && second > 3
                }
                let victim = try await cluster.workerPID("data-1")
                kill(victim, SIGKILL)
                try await waitUntil("data-1 to run as a new process", timeout: .seconds(30)) {
                    (try? await cluster.workerPID("data-1")).map { $0 != victim } ?? false
                }
            } catch {
                load.stop(grace: .seconds(1))
                throw error
            }
            let status = await load.waitForExit(timeout: .seconds(120))
            if status == nil { load.stop(grace: .seconds(1)) }
            return (status, load)
        }

        /// fsm-load's last run from its `--json` report, checked to have exited 0 on the direct
        /// road, with its output for the expectations' messages.
        static func lastDirectRun(of load: ChildProcess, status: Int32?) throws -> (run: [String: JSONValue], output: String) {
            let output = "\(load.stdout)\n\(load.stderr)"
            #expect(status == 0, "fsm-load: \(output)")
            let report = try JSONValue(parsing: Data(load.stdout.utf8))
            let run = try #require(report.objectValue?["runs"]?.arrayValue?.last?.objectValue, "\(output)")
            #expect(run["route"]?.stringValue == "direct", "\(output)")
            return (run, output)
        }

        @Test func aWorkerKilledMidRunLosesNothingOnTheDirectRoad() async throws {
            try await withCluster(Self.topology) { cluster in
                let watcher = try await cluster.watch(["state:counter/"])
                let (status, load) = try await Self.killDataOne(cluster, during: ["--mode", "reply", "--verify", "--rate", "400", "--duration", "8"])
                let (run, output) = try Self.lastDirectRun(of: load, status: status)
                func number(_ key: String) -> Int? { run[key].flatMap(Self.integer) }
                let sent = try #require(number("sent"), "\(output)")
                #expect(sent > 0)
                // Every request answered, none refused, none lost.
                #expect(number("lost") == 0 && number("failed") == 0 && number("acknowledged") == sent, "\(output)")
                // The dead worker's events went again: the keys were put to work.
                #expect((number("resent") ?? 0) > 0, "\(output)")
                // The connection asked where the counters live now, rather than leaving the dead
                // worker's share on the coordinator's road for the rest of the run.
                #expect((number("relocations") ?? 0) > 0, "\(output)")
                // Applied exactly once each: the counts grew by what was sent.
                let verification = try #require(run["verification"]?.objectValue, "\(output)")
                #expect(verification["applied"].flatMap(Self.integer) == sent, "\(output)")
                // The restarted worker's CPU is reported (its new process's), marked so.
                #expect(run["cpuSeconds"]?.objectValue?["data-1"] != nil, "\(output)")
                #expect(run["restarted"]?.arrayValue == [.string("data-1")], "\(output)")

                // The events stream: every count of every driven counter, from the first event
                // (through the coordinator) to the last, whichever road and process made it.
                var finals = 0
                for index in 0..<Self.addresses {
                    let address = "counter/\(index)"
                    let final = try #require(await Self.count(cluster, address), "\(address) has no count")
                    finals += final
                    try await watcher.waitFor("\(address) at \(final)") { event in
                        event.topic == "state:" + address && event.state?["count"].flatMap(Self.integer) == final
                    }
                    let missing = Set(1...final).subtracting(Self.countsSeen(watcher, address))
                    #expect(missing.isEmpty, "the watcher never saw \(address) at \(missing.sorted())")
                }
                // One event per address started the instances, through the coordinator.
                #expect(finals == sent + Self.addresses, "\(output)")
                #expect(watcher.events.allSatisfy { $0.missed == nil }, "the watcher was told of a gap")
            }
        }

        /// A run after the one a worker was killed in starts where the worker lives now: fsm-load
        /// locates the machine before each run, so the next run sends the restarted worker's
        /// share straight to its new endpoint, with nothing to resend and nothing to locate again
        /// (it used to start from the endpoint of the process killed).
        @Test func theRunAfterAWorkerRestartStartsOnItsNewEndpoint() async throws {
            try await withCluster(Self.topology) { cluster in
                let (status, load) = try await Self.killDataOne(cluster, during: ["--mode", "ack,reply", "--rate", "200", "--duration", "6"])
                let output = "\(load.stdout)\n\(load.stderr)"
                #expect(status == 0, "fsm-load: \(output)")
                let report = try JSONValue(parsing: Data(load.stdout.utf8))
                let listed = report.objectValue?["runs"]?.arrayValue ?? []
                let runs = listed.compactMap { $0.objectValue }
                try #require(runs.map { $0["mode"]?.stringValue } == ["ack", "reply"], "\(output)")
                #expect(runs[0]["resent"].flatMap(Self.integer) ?? 0 > 0, "the kill fell in the ack run: \(output)")
                #expect(runs[1]["resent"] == nil && runs[1]["relocations"] == nil, "\(output)")
                #expect(runs[1]["lost"].flatMap(Self.integer) == 0 && runs[1]["failed"].flatMap(Self.integer) == 0, "\(output)")
            }
        }
    }
}
