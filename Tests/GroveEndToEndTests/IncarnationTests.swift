import Foundation
import GroveWire
import Testing

extension EndToEnd {
    /// Issue 21, item 5: incarnations and the instances report, with real processes over tcp.
    @Suite(.timeLimit(.minutes(2)))
    struct IncarnationTests {
        static let replaced = TopologyFile(
            name: "incarnations", transport: .tcp,
            workers: [.init(name: "outside", external: true)],
            machines: [.init(name: "counter", type: "Counter", worker: "outside")],
            heartbeat: (intervalMs: 100, timeoutMs: 1000)
        )

        static let durable = TopologyFile(
            name: "reported-instances", transport: .tcp,
            workers: [.init(name: "w")],
            machines: [.init(name: "counters", type: "Counter", worker: "w", keyed: true, durability: "state")]
        )

        /// An external worker is stopped (SIGSTOP), declared lost, and a new process takes its
        /// name. When the old one continues, it is told it was superseded and exits 78; the new
        /// one keeps serving. A registration the old one may send is refused and logged once.
        @Test func aStoppedWorkerReplacedByANewProcessStopsWhenItContinues() async throws {
            try await withCluster(Self.replaced) { cluster in
                let old = try #require(cluster.externalWorker("outside"))
                #expect(try await cluster.send("counter", #"{"add":{"_0":5}}"#) == json(#"{"count":5}"#))

                old.signal(SIGSTOP)
                defer { old.signal(SIGCONT) }
                try await waitUntil("the stopped worker to be declared lost", timeout: .seconds(15)) {
                    (try? await cluster.list())?.workers.first { $0.name == "outside" }?.registered == false
                }
                let new = try await cluster.startExternalWorker("outside")
                try await waitUntil("the new process to hold the name", timeout: .seconds(15)) {
                    (try? await cluster.workerPID("outside")) == new.pid
                }
                // The new process's counter, not the old one's 5. A get, retried: while names change
                // hands a request may be answered worker-lost.
                try await waitUntil("the new process to serve counter", timeout: .seconds(15)) {
                    (try? await cluster.state("counter")) == json(#"{"count":0}"#)
                }

                old.signal(SIGCONT)
                let status = await old.waitForExit(timeout: .seconds(20))
                #expect(status == 78, "the old process: \(old.stderr.suffix(2000))")
                // Told by the coordinator's heartbeat (which names the new incarnation) or by the
                // refusal of its registration, whichever reaches it first.
                let told = old.stderr.split(separator: "\n").filter { $0.contains("superseded") && $0.contains("(pid \(old.pid))") }
                #expect(told.count == 1, "\(old.stderr.suffix(2000))")
                #expect(new.isRunning)
                // While the old process reconnected it held the name for a moment (tcp without
                // keys hands a routing id to its latest connection), so a send to the new one may
                // have failed and the coordinator declared it lost: it registers again on its own.
                try await waitUntil("the new process to hold the name again", timeout: .seconds(15)) {
                    (try? await cluster.workerPID("outside")) == new.pid
                }
                try await waitUntil("counter to be the new process's still", timeout: .seconds(15)) {
                    (try? await cluster.state("counter")) == json(#"{"count":0}"#)
                }
                #expect(try await cluster.state("counter") != json(#"{"count":5}"#), "the old process's copy serves nothing")
                let refusals = cluster.log.split(separator: "\n").filter {
                    $0.contains("dropped the registration of worker outside") && $0.contains("(pid \(old.pid))") && $0.contains("(pid \(new.pid))")
                }
                #expect(refusals.count <= 1, "logged at most once, with both: \(cluster.log.suffix(3000))")
            }
        }

        /// A durable keyed instance on a worker killed with SIGKILL and restarted by its
        /// supervisor is listed as soon as the worker is back, without an event sent to it.
        @Test func aRestartedWorkersDurableInstancesAreListedWithoutAnEvent() async throws {
            try await withCluster(Self.durable) { cluster in
                #expect(try await cluster.send("counters/a", #"{"add":{"_0":3}}"#) == json(#"{"count":3}"#))
                #expect(try await cluster.list().machines.first { $0.name == "counters" }?.instances == ["counters/a"])

                try await cluster.killAndAwaitRestart("w", timeout: .seconds(20))
                // Listed again once the worker reports what it brought back: no event to it.
                try await waitUntil("counters/a to be listed again", timeout: .seconds(10)) {
                    (try? await cluster.list())?.machines.first { $0.name == "counters" }?.instances == ["counters/a"]
                }
                #expect(try await cluster.state("counters/a") == json(#"{"count":3}"#))
            }
        }
    }
}
