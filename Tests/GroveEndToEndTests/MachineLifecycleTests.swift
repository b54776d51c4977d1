import Foundation
import GroveWire
import Testing

extension EndToEnd {
    /// A machine that ends (stopped here) is announced on `machine:<address>` with its final
    /// state; later events get `machine-ended`. Over ipc.
    @Suite(.timeLimit(.minutes(1)))
    struct MachineLifecycleTests {
        static let topology = TopologyFile(
            name: "lifecycle", transport: .ipc,
            workers: [.init(name: "edge")],
            machines: [.init(name: "counter", type: "Counter", worker: "edge", keyed: true)]
        )

        @Test func aStoppedMachineIsAnnouncedWithItsFinalState() async throws {
            try await withCluster(Self.topology) { cluster in
                let watcher = try await cluster.watch(["machine:"])
                try await cluster.send("counter/a", #"{"add":{"_0":7}}"#)
                let stopped = try await cluster.fsmSend(["stop", "counter/a"])
                #expect(stopped.status == 0, "\(stopped)")
                let matches = try await watcher.waitFor("counter/a's end on machine:") { event in
                    event.topic == "machine:counter/a"
                }
                let ended = try #require(matches.first)
                #expect(ended.kind == "machine")
                #expect(ended.reason == "stopped")
                #expect(ended.payload.objectValue?["state"] == json(#"{"count":7}"#))
                #expect(ended.worker == "edge")
                let after = try await cluster.fsmSend(["counter/a", "increment"])
                #expect(after.status == 1)
                #expect(after.stderr.contains("machine-ended"))
            }
        }
    }
}
