import Foundation
import GroveWire
import Synchronization
import Testing

extension EndToEnd {
    /// Issue 34, attack 3: a client with `send` on `counter*` only sends
    /// `{"add":{"_0":9223372036854775807}}` twice to each of twelve fresh keys. On bf2b560 the
    /// second add overflowed and trapped worker `main` each time, quarantine never triggered
    /// (each address was new), and after six crashes the supervisor escalated: fsm-launch exited
    /// 3, every machine down. Now each crash is attributed to its pattern and its sender: after
    /// two, the pattern is quarantined for every address and the sender suspended, the crashes
    /// are forgiven, and the topology keeps serving. Real processes over CURVE, the trapping
    /// `CrashTestCounter` of `fsm-worker --with-test-machines`; and the shipped `Counter`, which
    /// saturates instead of trapping.
    @Suite(.timeLimit(.minutes(4)))
    struct CrashContainmentTests {
        static let overflow = #"{"add":{"_0":9223372036854775807}}"#

        /// - Parameter passivateAfterMs: For `counter`: with it, its idle instances rest as their
        ///   state alone (it keeps nothing), so the trapping event, sent without an idempotency
        ///   key, runs on a resting state.
        static func topology(_ name: String, counter type: String, passivateAfterMs: Int? = nil) -> TopologyFile {
            TopologyFile(
                name: name, transport: .tcp,
                workers: [.init(name: "main", arguments: ["--with-test-machines"]), .init(name: "side")],
                machines: [.init(name: "counter", type: type, worker: "main", keyed: true, passivateAfterMs: passivateAfterMs),
                           .init(name: "neighbour", type: "Counter", worker: "main"),
                           .init(name: "other", type: "Counter", worker: "side", keyed: true)],
                security: """
                    { "coordinatorKey": "keys/coordinator.key_secret",
                      "clients": [ { "key": "keys/ops.key", "roles": ["read", "send", "admin"] },
                                   { "key": "keys/sender.key", "roles": ["read", "send"], "machines": ["counter*"] } ] }
                    """,
                keyPairs: ["coordinator", "ops", "sender"],
                clientKey: "ops"
            )
        }

        /// Asks `other/watch` (on worker `side`) for its state every 100 ms until stopped, and
        /// keeps what failed: the machines not on the crashed worker must answer throughout.
        /// Each answer may take up to 10 s: a failure is an error or no answer at all, not a slow
        /// one (each ask is a new fsm-send process, while the crashed worker restarts beside it,
        /// on a machine that may be loaded).
        final class Bystander: Sendable {
            private let state = Mutex<(failures: [String], answers: Int, task: Task<Void, Never>?)>(([], 0, nil))

            init(_ cluster: Cluster) {
                let task = Task { [self] in
                    while !Task.isCancelled {
                        let result = try? await cluster.fsmSend(["send", "other/watch", "increment", "--timeout", "10"])
                        // Stopped while it asked: that answer is not the topology's.
                        if Task.isCancelled { break }
                        state.withLock { state in
                            if let result, result.status == 0 {
                                state.answers += 1
                            } else {
                                state.failures.append(result.map { "\($0)" } ?? "fsm-send did not run")
                            }
                        }
                        try? await Task.sleep(for: .milliseconds(100))
                    }
                }
                state.withLock { $0.task = task }
            }

            /// Stops asking; what failed, and how many answered.
            func stop() async -> (failures: [String], answers: Int) {
                let running = state.withLock { $0.task }
                running?.cancel()
                await running?.value
                return state.withLock { ($0.failures, $0.answers) }
            }
        }

        @Test(arguments: [nil, 60_000])
        func overflowingAddsOnFreshKeysAreContainedAndTheSenderSuspended(passivateAfterMs: Int?) async throws {
            try await withCluster(Self.topology("overflow", counter: "CrashTestCounter", passivateAfterMs: passivateAfterMs)) { cluster in
                #expect(try await cluster.send("neighbour", "increment")["count"] == .integer(1))
                let launcher = cluster.launch.pid
                let bystander = Bystander(cluster)
                var outcomes: [String] = []
                // Passivating, without idempotency keys, so that the adds run on resting states
                // (an event with a key moves its instance to a host).
                let once = passivateAfterMs == nil ? [] : ["--no-retry"]
                for key in 1...12 {
                    for attempt in 1...2 {
                        let sent = try await cluster.fsmSend(["counter/k-\(key)", Self.overflow] + once, as: "sender")
                        outcomes.append("k-\(key)#\(attempt): \(sent.status) \(sent.stderr.prefix(160))")
                    }
                    #expect(ProcessTable.isAlive(launcher), "fsm-launch stopped after key \(key):\n\(outcomes.joined(separator: "\n"))")
                }
                if passivateAfterMs != nil {
                    #expect(cluster.log.contains("the idle instances of counter rest as their state alone"), "\(cluster.log.suffix(2000))")
                }
                let (failures, answers) = await bystander.stop()
                #expect(failures.isEmpty, "a machine on another worker did not answer: \(failures.prefix(3))")
                #expect(answers > 0)
                #expect(cluster.launch.exitStatus == nil, "fsm-launch exited: \(cluster.log.suffix(3000))")
                #expect(!cluster.log.contains("Stopping the topology"), "escalated:\n\(cluster.log.suffix(3000))")

                // Two crashes: the first add of k-1 ran, its second trapped; likewise k-2. Then
                // the sender is refused, saying why and how an admin lifts it.
                let last = try await cluster.fsmSend(["counter/k-13", "increment"], as: "sender")
                #expect(last.status == 4, "\(last)")
                #expect(last.stderr.contains("forbidden") && last.stderr.contains("suspended: 2 worker crashes"), "\(last)")
                #expect(last.stderr.contains("fsm-send suspensions lift"), "\(last)")
                let crashes = cluster.log.split(separator: "\n").filter { $0.contains("last process died while it ran a sent event") }
                #expect(crashes.count == 2, "\(outcomes.joined(separator: "\n"))\n\(crashes)")
                try await cluster.waitForLog("no longer counts toward group 'main'", count: 2)
                // The worker's other machines were lost with it, as one restart costs; its
                // neighbour is back and serves.
                #expect(try await cluster.send("neighbour", "increment")["count"] == .integer(1))

                // An admin lists and lifts the suspension.
                let listed = try await cluster.fsmSend(["suspensions"])
                #expect(listed.status == 0, "\(listed)")
                let sender = try String(contentsOfFile: cluster.keyPath("sender", secret: false), encoding: .utf8)
                let senderKey = try #require(listed.stdout.split(separator: "\t").first.map(String.init), "\(listed)")
                #expect(sender.contains(senderKey), "the listed key is the sender's: \(listed)")
                #expect(listed.stdout.contains("CrashTestCounter.add"), "\(listed)")
                #expect(try await cluster.fsmSend(["suspensions", "lift", senderKey], as: "sender").status == 4, "only an admin lifts it")
                let lifted = try await cluster.fsmSend(["suspensions", "lift", cluster.keyPath("sender", secret: false)])
                #expect(lifted.status == 0, "\(lifted)")
                #expect(try await cluster.fsmSend(["suspensions"]).stdout.isEmpty)

                // The pattern stays quarantined, for fresh addresses too, even a harmless value.
                let fresh = try await cluster.fsmSend(["counter/fresh", #"{"add":{"_0":1}}"#], as: "sender")
                #expect(fresh.status == 2, "\(fresh)")
                #expect(fresh.stderr.contains("quarantined") && fresh.stderr.contains("CrashTestCounter.add"), "\(fresh)")
                #expect(fresh.stderr.contains("fsm-send quarantines release CrashTestCounter add"), "\(fresh)")
                let quarantines = try await cluster.fsmSend(["quarantines"])
                #expect(quarantines.stdout.hasPrefix("CrashTestCounter\tadd\t2\t"), "\(quarantines)")
                // Released by an admin, the pattern is served again, to the lifted sender too.
                let released = try await cluster.fsmSend(["quarantines", "release", "CrashTestCounter", "add"])
                #expect(released.status == 0, "\(released)")
                let after = try await cluster.fsmSend(["counter/fresh", #"{"add":{"_0":1}}"#], as: "sender")
                #expect(after.status == 0 && after.stdout.contains(#""count":1"#), "\(after)")
            }
        }

        @Test func theShippedCounterSaturatesInsteadOfTrapping() async throws {
            try await withCluster(Self.topology("saturate", counter: "Counter")) { cluster in
                let before = try await cluster.workerPID("main")
                for key in 1...12 {
                    for _ in 1...2 {
                        let sent = try await cluster.fsmSend(["counter/k-\(key)", Self.overflow], as: "sender")
                        #expect(sent.status == 0, "\(sent)")
                        #expect(sent.stdout.contains(#""count":9223372036854775807"#), "held at Int.max: \(sent)")
                    }
                }
                let negative = try await cluster.fsmSend(["counter/low", #"{"add":{"_0":-9223372036854775807}}"#], as: "sender")
                #expect(negative.status == 0)
                let lower = try await cluster.fsmSend(["counter/low", #"{"add":{"_0":-9}}"#], as: "sender")
                #expect(lower.stdout.contains(#""count":-9223372036854775808"#), "held at Int.min: \(lower)")
                #expect(try await cluster.workerPID("main") == before, "no crash, no restart")
                #expect(try await cluster.fsmSend(["quarantines"]).stdout.isEmpty)
                #expect(try await cluster.fsmSend(["suspensions"]).stdout.isEmpty)
            }
        }
    }
}

extension EndToEnd.CrashContainmentTests {
    /// `fsm-launch --check` says when crashes are contained, and warns when a group would give
    /// up first.
    @Test func checkSaysWhenCrashesAreContained() async throws {
        let directory = try Cluster.makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var topology = TopologyFile(name: "containment", transport: .ipc, workers: [.init(name: "main")],
                                    machines: [.init(name: "counter", type: "Counter", worker: "main", keyed: true)])
        let file = try topology.write(in: directory)
        let defaults = try await runCommand(Products.launch, ["--check", file.path], in: directory)
        #expect(defaults.stdout.contains(
            "poison: an event pattern is quarantined after 2 crashes, a client key suspended after 2 crashes, within 600000 ms\n"),
            "\(defaults)")
        topology.workers[0].supervision = #"{ "intensity": 1 }"#
        _ = try topology.write(in: directory)
        let outrun = try await runCommand(Products.launch, ["--check", file.path], in: directory)
        #expect(outrun.stdout.contains("warning: group(s) 'main' (intensity 1) may give up"), "\(outrun)")
    }
}
