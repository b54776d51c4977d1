import Foundation
import GroveWire
import Testing

extension EndToEnd {
    /// The worker running a remote io call, `io`, killed (kill -9) before it answers, and what a
    /// cancelled call's task holds there. Its handlers take 600 s and hold a cancelled task until
    /// the test opens a gate (`fsm-worker --io-cancel-gate`), so nothing depends on timing; `io`
    /// runs one call at a time (`ioLimits.concurrentPerWorker` 1). Over ipc.
    @Suite(.timeLimit(.minutes(2)))
    struct IOWorkerLossTests {
        static func topology(gate: URL) -> TopologyFile {
            TopologyFile(
                name: "io-worker-loss", transport: .ipc,
                workers: [.init(name: "edge"),
                          .init(name: "io", arguments: ["--io-delay-ms", "600000", "--io-cancel-gate", gate.path])],
                machines: [.init(name: "loader", type: "DataLoader", worker: "edge", keyed: true)],
                io: [("FetchItems", "io")],
                ioLimits: #"{ "concurrentPerWorker": 1 }"#
            )
        }

        /// Runs `body` on a cluster of ``topology(gate:)``, with the gate's path.
        static func withGatedCluster(_ body: (Cluster, URL) async throws -> Void) async throws {
            let gates = try Cluster.makeDirectory()
            defer { try? FileManager.default.removeItem(at: gates) }
            let gate = gates.appendingPathComponent("gate")
            try await withCluster(topology(gate: gate)) { cluster in try await body(cluster, gate) }
        }

        /// An effect event's payload as the coordinator publishes it.
        static func effect(_ address: String, _ phase: String, reason: String, task: String? = nil) -> JSONValue {
            var members: [String: JSONValue] = ["address": .string(address), "effect": .string("fetch-items"), "request": .string("FetchItems"),
                                                "worker": .string("io"), "phase": .string(phase), "reason": .string(reason)]
            if let task { members["task"] = .string(task) }
            return .object(members)
        }

        /// Kills the io worker; returns why the coordinator says it was lost, once fsm-launch
        /// has restarted it and it registered again.
        static func killIOWorker(_ cluster: Cluster, _ watcher: EventWatcher) async throws -> String {
            let victim = try await cluster.workerPID("io")
            kill(victim, SIGKILL)
            let lost = try await watcher.waitFor("io to be reported lost") { $0.isWorker("io", "lost") }
            try await watcher.waitFor("io to register again") { $0.isWorker("io", "registered") }
            #expect(try await cluster.workerPID("io") != victim)
            return try #require(lost.first?.reason)
        }

        /// Starts loader `address`'s fetch on the io worker.
        static func startFetch(_ address: String, _ cluster: Cluster, _ watcher: EventWatcher) async throws {
            #expect(try await cluster.send(address, "load") == loading)
            try await watcher.waitFor("\(address)'s fetch to start") { $0.isEffect(address, "started", id: "fetch-items") }
        }

        @Test func killingTheIOWorkerMidCallFailsItsCallerWithWorkerLostOnce() async throws {
            try await Self.withGatedCluster { cluster, _ in
                let watcher = try await cluster.watch(["state:loader/", "effect:loader/", "worker:io"])
                try await Self.startFetch("loader/k", cluster, watcher)

                let reason = try await Self.killIOWorker(cluster, watcher)

                // The machine heard `worker-lost` (retryable), naming the worker and why.
                let expected = JSONValue.object(["error": .object([
                    "message": .string("worker io running 'FetchItems' was lost (\(reason))"), "canRetry": .bool(true),
                ])])
                let state = try await cluster.waitForState("loader/k", "failed") { $0.caseName == "error" }
                #expect(state == expected)
                let lost = try await watcher.waitFor("the fetch to be published lost") { $0.isEffect("loader/k", "lost") }
                #expect(lost.first?.payload == Self.effect("loader/k", "lost", reason: "worker io lost: \(reason)"))

                // Once: nothing more of that call after the io worker is back, and one failure.
                _ = try await cluster.mark(watcher)
                #expect(watcher.phases(of: "loader/k") == ["started", "lost"])
                let failures = watcher.states(of: "loader/k").filter { $0.caseName == "error" }
                #expect(failures == [expected])
            }
        }

        @Test func aCancelledCallHoldsTheIOWorkersPlaceUntilItsTaskEnded() async throws {
            try await Self.withGatedCluster { cluster, gate in
                let watcher = try await cluster.watch(["effect:loader/"])
                try await Self.startFetch("loader/g", cluster, watcher)
                let cancel = try await cluster.fsmSend(["cancel", "loader/g", "fetch-items"])
                #expect(cancel.status == 0, "\(cancel)")
                try await cluster.waitForLog("io handler cancelled; holding its task")

                // The cancelled task still runs on io, in io's one place: a new call is refused.
                #expect(try await cluster.send("loader/b", "load") == loading)
                let refused = try await cluster.waitForState("loader/b", "refused") { $0.caseName == "error" }
                let message = refused["error"]?["message"]?.stringValue ?? ""
                #expect(message.contains("as ioLimits.concurrentPerWorker allows (1), so 'FetchItems' was not started"), "\(message)")

                // The task ends; its worker says so, and the place is free again.
                try #require(FileManager.default.createFile(atPath: gate.path, contents: Data()), "the gate at \(gate.path)")
                try await watcher.waitFor("the fetch to be cancelled") { $0.isEffect("loader/g", "cancelled", id: "fetch-items") }
                #expect(try await cluster.send("loader/b", "retry") == loading)
                try await watcher.waitFor("loader/b's fetch to start") { $0.isEffect("loader/b", "started", id: "fetch-items") }
            }
        }

        @Test func killingTheIOWorkerWhileACancelledTaskIsHeldPublishesItCancelledOnce() async throws {
            try await Self.withGatedCluster { cluster, _ in
                let watcher = try await cluster.watch(["effect:loader/", "worker:io"])
                try await Self.startFetch("loader/h", cluster, watcher)
                let cancel = try await cluster.fsmSend(["cancel", "loader/h", "fetch-items"])
                #expect(cancel.status == 0, "\(cancel)")
                try await cluster.waitForLog("io handler cancelled; holding its task")

                let reason = try await Self.killIOWorker(cluster, watcher)

                let cancelled = try await watcher.waitFor("the fetch to be cancelled") { $0.isEffect("loader/h", "cancelled") }
                #expect(cancelled.first?.payload == Self.effect(
                    "loader/h", "cancelled", reason: "cancelled; worker io was lost (\(reason)) before it said the task ended",
                    task: "worker-lost"))
                _ = try await cluster.mark(watcher)
                #expect(watcher.phases(of: "loader/h") == ["started", "cancelled"])
                // The lost worker took the place with it: the new io runs the next call.
                try await Self.startFetch("loader/n", cluster, watcher)
            }
        }
    }
}
