import Foundation
import GroveWire
import Testing

extension EndToEnd {
    /// Workers heartbeat at the interval the coordinator's welcome gives them, not at a pace of
    /// their own: a topology with a short heartbeat keeps idle workers registered. Over ipc.
    @Suite(.timeLimit(.minutes(2)))
    struct HeartbeatTests {
        static let topology = TopologyFile(
            name: "short-heartbeat", transport: .ipc,
            workers: [.init(name: "edge"), .init(name: "data-io")],
            machines: [.init(name: "counter", type: "Counter", worker: "edge")],
            io: [("FetchItems", "data-io")],
            heartbeat: (intervalMs: 50, timeoutMs: 200)
        )

        /// 30 idle seconds at 50/200 ms: no worker is declared lost (with workers heartbeating
        /// every 250 ms whatever the topology says, each was lost about four times a second).
        @Test func idleWorkersStayRegisteredAtAShortHeartbeat() async throws {
            try await withCluster(Self.topology) { cluster in
                let watcher = try await cluster.watch(["worker:"])
                try await cluster.send("counter", "increment")

                // Watching for a while is the test: fail at the first loss, else after 30 s.
                let deadline = ContinuousClock.now + .seconds(30)
                while ContinuousClock.now < deadline {
                    let lost = watcher.events(where: { $0.topic.hasPrefix("worker:") && $0.phase == "lost" })
                    guard lost.isEmpty else {
                        Issue.record("workers were lost while idle: \(lost.prefix(5).map(\.description))")
                        break
                    }
                    try await Task.sleep(for: .milliseconds(500))
                }

                let churn = watcher.events(where: { $0.topic.hasPrefix("worker:") })
                #expect(churn.isEmpty, "no worker lost or registered again: \(churn.prefix(5).map(\.description))")
                #expect(!cluster.log.contains("lost ("), "fsm-launch logged a loss:\n\(cluster.log.suffix(2000))")
                let listing = try await cluster.list()
                let unregistered = listing.workers.filter { !$0.registered }.map(\.name)
                #expect(unregistered.isEmpty)
                #expect(try await cluster.state("counter") == json(#"{"count":1}"#), "the machine kept its state")
            }
        }
    }
}
