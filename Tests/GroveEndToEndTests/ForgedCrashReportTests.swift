import Foundation
import GroveWire
import Testing

extension EndToEnd {
    /// The second review of issue 34, row 9: a worker key re-registered with made-up crash
    /// reports, and `AuthFlow.login` was quarantined for every address in under a second. A
    /// crash report is the worker's word; the coordinator counts it only for a machine the
    /// topology places on that worker, of the type the topology gives it, and only with a
    /// witness besides the worker (fsm-launch saw the process exit, or a client's request at
    /// that address was lost with it). Real processes over CURVE: the hostile worker is a pyzmq
    /// peer with the external group `edge`'s own key (``RoguePeer``); the real crash is the
    /// trapping `CrashTestCounter` of `fsm-worker --with-test-machines`.
    @Suite(.timeLimit(.minutes(4)))
    struct ForgedCrashReportTests {
        /// One crash quarantines and suspends, so a forged report that counted would show at once.
        static let topology: TopologyFile = {
            var topology = TopologyFile(
                name: "forged-crashes", transport: .tcp,
                workers: [.init(name: "main", arguments: ["--with-test-machines"]),
                          .init(name: "edge", external: true, key: "keys/edge.key")],
                machines: [.init(name: "counter", type: "CrashTestCounter", worker: "main", keyed: true),
                           .init(name: "tally", type: "Counter", worker: "edge", keyed: true)],
                security: """
                    { "coordinatorKey": "keys/coordinator.key_secret",
                      "clients": [ { "key": "keys/ops.key", "roles": ["read", "send", "admin"] },
                                   { "key": "keys/sender.key", "roles": ["read", "send"], "machines": ["counter*", "tally*"] } ] }
                    """,
                keyPairs: ["coordinator", "edge", "ops", "sender"],
                clientKey: "ops")
            topology.poison = #"{ "quarantineAfter": 1, "suspendAfter": 1 }"#
            return topology
        }()

        /// The hostile edge registers once, with `crash` as its report, and goes away.
        static func register(_ cluster: Cluster, crash: String? = nil, hold: Double = 0.5) async throws -> RoguePeer.Report {
            let report = try await RoguePeer.run(cluster, mode: "worker", key: "edge", endpoint: try await cluster.workersEndpoint(),
                                                 name: "edge", machineTypes: ["Counter"], crash: crash, steps: [], hold: hold)
            try #require(report.welcomed, "the hostile edge registers with its own key: \(report)")
            return report
        }

        static func isTallyT(_ event: RoguePeer.Report.Received) -> Bool { event.address == "tally/t" }

        static func edgeRegistered(_ cluster: Cluster) async -> Bool {
            (try? await cluster.list())?.workers.first { $0.name == "edge" }?.registered == true
        }

        static func edgeLost(_ cluster: Cluster) async throws {
            try await waitUntil("edge to be lost", timeout: .seconds(20), interval: .milliseconds(100)) {
                !(await edgeRegistered(cluster))
            }
        }

        /// What `fsm-send quarantines` and `fsm-send suspensions` list.
        static func poisonLists(_ cluster: Cluster) async throws -> (quarantines: String, suspensions: String) {
            let quarantines = try await cluster.fsmSend(["quarantines"])
            let suspensions = try await cluster.fsmSend(["suspensions"])
            #expect(quarantines.status == 0 && suspensions.status == 0, "\(quarantines) \(suspensions)")
            return (quarantines.stdout, suspensions.stdout)
        }

        /// Nothing quarantined, nobody suspended, after `what`. The coordinator counts a report
        /// before it welcomes the worker, so this holds as soon as the registration was welcomed.
        static func expectNothingPoisoned(_ cluster: Cluster, after what: String) async throws {
            let lists = try await poisonLists(cluster)
            #expect(lists.quarantines.isEmpty, "\(what) quarantined: \(lists.quarantines)")
            #expect(lists.suspensions.isEmpty, "\(what) suspended: \(lists.suspensions)")
        }

        @Test func forgedCrashReportsCountForNothingAndARealCrashStillDoes() async throws {
            try await withCluster(Self.topology) { cluster in
                try await WorkerAuthorityTests.kill("edge", in: cluster)

                // A witness the edge key can make: the hostile edge registers, takes a request of
                // the sender's key for its own tally/t, never answers it, and goes silent; the
                // coordinator declares it lost and the request lost with it.
                async let holding = Self.register(cluster, hold: 4)
                try await waitUntil("the hostile edge to register", timeout: .seconds(20), interval: .milliseconds(50)) {
                    await Self.edgeRegistered(cluster)
                }
                // Sent once (fsm-send resends a lost event with its key by default): the loss is the witness.
                let lost = try await cluster.fsmSend(["tally/t", "increment", "--timeout", "20", "--no-retry"], as: "sender",
                                                     timeout: .seconds(30))
                #expect(lost.status != 0 && lost.stderr.contains("worker-lost"), "\(lost)")
                let received = try await holding.events ?? []
                let taken = try #require(received.first(where: Self.isTallyT), "the edge was sent the request: \(received.count) event(s)")
                try await Self.edgeLost(cluster)

                // 1. That real lost request, claimed as a crash of another group's type: it would
                //    quarantine main's CrashTestCounter.add and suspend the sender.
                _ = try await Self.register(cluster, crash: #"""
                    {"address":"tally/t","type":"CrashTestCounter","event":"add","origin":"sent","correlation":\#(taken.correlation)}
                    """#)
                try await Self.expectNothingPoisoned(cluster, after: "a lost request claimed as a crash of another group's type")
                try await cluster.waitForLog("worker edge reported a crash", #""tally/t" (CrashTestCounter)"#, "does not place on it; not counted")
                try await Self.edgeLost(cluster)

                // 2. A crash of another group's machine.
                _ = try await Self.register(cluster, crash: #"{"address":"counter/k-1","type":"CrashTestCounter","event":"add","origin":"sent"}"#)
                try await Self.expectNothingPoisoned(cluster, after: "a crash of another group's machine")
                try await cluster.waitForLog("worker edge reported a crash", #""counter/k-1" (CrashTestCounter)"#, "does not place on it; not counted")
                try await Self.edgeLost(cluster)

                // 3. A crash of its own machine and type, with no witness: no process exit seen,
                //    no request lost at that address.
                _ = try await Self.register(cluster, crash: #"{"address":"tally/u","type":"Counter","event":"increment","origin":"sent"}"#)
                try await Self.expectNothingPoisoned(cluster, after: "a crash without a witness")
                try await cluster.waitForLog("worker edge reported a crash", "tally/u (Counter.increment)", "neither fsm-launch saw its process exit",
                                             "not counted")

                // The sender's events and both patterns are served.
                let served = try await cluster.fsmSend(["counter/k-2", #"{"add":{"_0":1}}"#], as: "sender")
                #expect(served.status == 0 && served.stdout.contains(#""count":1"#), "\(served)")
                #expect(!cluster.log.contains("last process died while it ran"), "a forged report was counted:\n\(cluster.log.suffix(3000))")

                // A real crash still counts: the second overflowing add traps main, fsm-launch sees
                // the trap, and the restarted main's report quarantines the pattern and suspends
                // the sender.
                let overflow = CrashContainmentTests.overflow
                #expect(try await cluster.fsmSend(["counter/k-3", overflow], as: "sender").status == 0)
                let trapped = try await cluster.fsmSend(["counter/k-3", overflow], as: "sender")
                #expect(trapped.status != 0, "\(trapped)")
                try await cluster.waitForLog("quarantined CrashTestCounter.add for every address", timeout: .seconds(30))
                let real = try await Self.poisonLists(cluster)
                #expect(real.quarantines.hasPrefix("CrashTestCounter\tadd\t1\t"), "\(real.quarantines)")
                let sender = try String(contentsOfFile: cluster.keyPath("sender", secret: false), encoding: .utf8)
                let suspended = try #require(real.suspensions.split(separator: "\t").first.map(String.init), "\(real.suspensions)")
                #expect(sender.contains(suspended), "the sender is suspended: \(real.suspensions)")
                #expect(!real.quarantines.contains("Counter\tincrement"), "\(real.quarantines)")
            }
        }
    }
}
