import Foundation
import GroveWire
import Testing

extension EndToEnd {
    /// Issue 21, poison events: an event that traps its worker twice is quarantined, listed by
    /// `fsm-send dead-letters` and refused when sent again; its machine and the worker's other
    /// machines keep their state. Real processes: fsm-launch supervising an fsm-worker with
    /// its test machines (`--with-test-machines`: `CrashTestCounter`, whose
    /// `crashWorkerForTesting` calls fatalError).
    @Suite(.timeLimit(.minutes(3)))
    struct PoisonEventTests {
        static let topology = TopologyFile(
            name: "poison", transport: .tcp,
            workers: [.init(name: "w", arguments: ["--with-test-machines"])],
            machines: [.init(name: "crashy", type: "CrashTestCounter", worker: "w", durability: "state"),
                       .init(name: "counter", type: "Counter", worker: "w", durability: "state")]
        )

        /// Sends the trapping event and waits for the supervisor to bring `w` back as a new process.
        static func crashWorker(_ cluster: Cluster) async throws {
            let before = try await cluster.workerPID("w")
            // Sent once: fsm-send resends a lost event with its key by default, and a trapping
            // event resent crashes the worker again (quarantine then stops it).
            let sent = try await cluster.fsmSend(["send", "crashy", "crashWorkerForTesting", "--no-retry"])
            #expect(sent.status != 0, "the trapping event was answered: \(sent)")
            try await waitUntil("w to come back as a new process", timeout: .seconds(30)) {
                (try? await cluster.workerPID("w")).map { $0 != before } ?? false
            }
        }

        @Test func anEventThatCrashesItsWorkerTwiceIsQuarantinedAndRefused() async throws {
            // No SWIFT_BACKTRACE of its own: fsm-launch starts its workers with a backtracer that
            // lets a trapped process die at once (WorkerEnvironment).
            try await withCluster(Self.topology) { cluster in
                #expect(try await cluster.send("crashy", #"{"add":{"_0":5}}"#) == json(#"{"count":5}"#))
                #expect(try await cluster.send("counter", #"{"add":{"_0":3}}"#) == json(#"{"count":3}"#))

                try await Self.crashWorker(cluster)
                // One crash quarantines nothing: an operator's kill -9 lands in some event too.
                let afterOne = try await cluster.fsmSend(["dead-letters"])
                #expect(afterOne.status == 0, "\(afterOne)")
                #expect(afterOne.stdout.isEmpty, "\(afterOne)")
                #expect(afterOne.stderr.contains("no dead letters (asked worker(s) w)"), "an empty list says so: \(afterOne)")

                try await Self.crashWorker(cluster)
                let listed = try await cluster.fsmSend(["dead-letters"])
                #expect(listed.status == 0, "\(listed)")
                let lines = listed.stdout.split(separator: "\n")
                try #require(lines.count == 1, "\(listed)")
                let fields = lines[0].split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
                try #require(fields.count == 7, "\(fields)")
                #expect(fields[0] == "w:1")
                #expect(fields[1] == "crashy")
                #expect(fields[2] == "w")
                #expect(fields[4] == "2")
                #expect(json(fields[5]) == json(#"{"crashWorkerForTesting":{}}"#))
                #expect(fields[6].contains("died while running it, 2 times"), "\(fields[6])")

                // The machine goes on from its state before the event; its neighbour kept its own.
                #expect(try await cluster.state("crashy") == json(#"{"count":5}"#))
                #expect(try await cluster.state("counter") == json(#"{"count":3}"#))

                let refused = try await cluster.fsmSend(["send", "crashy", "crashWorkerForTesting"])
                #expect(refused.status == 2, "\(refused)")
                #expect(refused.stderr.contains("quarantined"), "\(refused)")
                #expect(refused.stderr.contains("dead letter w:1"), "\(refused)")
                #expect(try await cluster.send("crashy", #"{"add":{"_0":1}}"#) == json(#"{"count":6}"#))

                let dropped = try await cluster.fsmSend(["dead-letters", "drop", "w:1"])
                #expect(dropped.status == 0, "\(dropped)")
                #expect(try await cluster.fsmSend(["dead-letters", "--json"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "[]")
            }
        }
    }
}
