import Foundation
import GroveWire
import Testing

extension EndToEnd {
    /// `fsm-load --verify` on a machine whose state is lost during the run (here an admin's
    /// restart of a counter without durability, as a worker's kill -9 does to all of its
    /// instances): the counts went back, so the report says that the state was lost and that a
    /// durable machine is needed, rather than a negative "applied" and events "lost".
    @Suite(.timeLimit(.minutes(2)))
    struct LoadVerifyTests {
        static let topology = TopologyFile(
            name: "load-verify", transport: .ipc,
            workers: [.init(name: "bench")],
            machines: [.init(name: "counter", type: "Counter", worker: "bench", keyed: true)]
        )

        @Test func aCountThatWentBackIsToldAsLostStateNotLostEvents() async throws {
            try await withCluster(Self.topology) { cluster in
                // counter/0 holds more than the run can add to it after a restart.
                _ = try await cluster.send("counter/0", #"{"add":{"_0":100000}}"#)
                let load = try await ChildProcess(
                    Products.load, ["--endpoint", cluster.clients, "--machine", "counter", "--machines", "2",
                                    "--mode", "ack", "--no-baseline", "--verify", "--connections", "1",
                                    "--rate", "100", "--duration", "3"],
                    outputIn: cluster.directory, label: "fsm-load")
                defer { load.stop(grace: .seconds(1)) }
                // counter/1 counts only the run's events: once it has some, the counts before the
                // run were read.
                try await waitUntil("the run to reach counter/1", timeout: .seconds(30)) {
                    let count = (try? await cluster.state("counter/1"))?["count"]
                    return count != nil && count != json("0")
                }
                _ = try await cluster.fsmSend(["restart", "counter/0"])

                let status = await load.waitForExit(timeout: .seconds(60))
                let output = "\(load.stdout)\n\(load.stderr)"
                #expect(status == 1, "fsm-load: \(output)")
                #expect(load.stdout.contains("but the count of counter/0 went back from 100000 to "), "\(output)")
                #expect(load.stdout.contains("the machine's state was lost"), "\(output)")
                #expect(load.stdout.contains("drive a durable machine"), "\(output)")
                #expect(!load.stdout.contains("applied -"), "\(output)")
                #expect(!load.stdout.contains("event(s) lost"), "\(output)")
            }
        }
    }
}
