import Foundation
import GroveWire
import Testing

extension EndToEnd {
    /// A cancelled remote io is published `cancelled` only once its task has ended on the worker
    /// running it. That worker's handler holds its cancelled task until the test opens a gate
    /// (`fsm-worker --io-cancel-gate`), so the order is checked without timing: nothing is
    /// published while the task is held, and the publication says the task ended.
    @Suite(.timeLimit(.minutes(2)))
    struct CancelAcknowledgementTests {
        @Test func cancelledIsPublishedAfterTheTaskEndedOnTheOtherWorker() async throws {
            let gates = try Cluster.makeDirectory()
            defer { try? FileManager.default.removeItem(at: gates) }
            let gate = gates.appendingPathComponent("gate")
            let topology = TopologyFile(
                name: "cancel-ack", transport: .ipc,
                workers: [.init(name: "edge"),
                          .init(name: "io", arguments: ["--io-delay-ms", "600000", "--io-cancel-gate", gate.path])],
                machines: [.init(name: "loader", type: "DataLoader", worker: "edge", keyed: true)],
                io: [("FetchItems", "io")]
            )
            try await withCluster(topology) { cluster in
                let watcher = try await cluster.watch(["effect:loader/"])
                #expect(try await cluster.send("loader/g", "load") == loading)
                try await watcher.waitFor("the fetch to start") { $0.isEffect("loader/g", "started", id: "fetch-items") }

                let cancel = try await cluster.fsmSend(["cancel", "loader/g", "fetch-items"])
                #expect(cancel.status == 0, "\(cancel)")
                // The io worker cancelled the task, which its handler now holds from ending.
                try await cluster.waitForLog("io handler cancelled; holding its task")

                // The coordinator forwarded the cancel before the io worker got it; a probe
                // publication made after that is published after anything it published then.
                let probes = watcher.events(where: { $0.topic == "state:" + TopologyFile.probe }).count
                try await cluster.send(TopologyFile.probe, "increment")
                try await watcher.waitFor("the probe's next state", count: probes + 1) { $0.topic == "state:" + TopologyFile.probe }
                #expect(watcher.effects(of: "loader/g", "cancelled").isEmpty, "published while the task had not ended")

                // The task ends: its worker says so, and only then is it published.
                try #require(FileManager.default.createFile(atPath: gate.path, contents: Data()), "the gate at \(gate.path)")
                let cancelled = try await watcher.waitFor("the fetch to be cancelled") { $0.isEffect("loader/g", "cancelled", id: "fetch-items") }
                // The handler logged its end before its task ended, so before the answer left.
                let released = cluster.log.split(separator: "\n").filter { $0.contains("io handler released; its task ends now") }
                #expect(released.count == 1, "\(released)")
                let event = try #require(cancelled.first)
                #expect(event.payload["task"] == .string("ended"))
                #expect(event.payload["taskEndedAtNs"] != nil)
                #expect(event.worker == "io")
                #expect(event.reason == "cancelled")
                #expect(watcher.phases(of: "loader/g") == ["started", "cancelled"])
            }
        }
    }
}
