import Foundation
import GroveWire
import Testing

extension EndToEnd {
    /// `fsm-send --route direct` to a worker that is stopped (SIGSTOP) past the heartbeat
    /// timeout, so that fsm-launch kills and restarts it: the direct socket never takes the
    /// request (no handshake with a stopped process, then no process at that endpoint), so
    /// nothing was sent; the client locates the machine again and sends it by the road that
    /// answer gives. It used to wait its whole --timeout on the old endpoint and exit 3
    /// ("took no request").
    @Suite(.timeLimit(.minutes(2)))
    struct DirectStoppedWorkerTests {
        static let topology = TopologyFile(
            name: "directstop", transport: .runtimeDirectory,
            workers: [.init(name: "data", direct: true)],
            machines: [.init(name: "counter", type: "Counter", worker: "data", keyed: true, durability: "state")]
        )

        @Test func aRequestTheStoppedWorkerNeverTookGoesWhereTheMachineLivesNow() async throws {
            try await withCluster(Self.topology) { cluster in
                #expect(try await cluster.send("counter/a", "increment") == json(#"{"count":1}"#))
                let victim = try await cluster.workerPID("data")
                kill(victim, SIGSTOP)
                defer { kill(victim, SIGCONT) }
                let send = try await ChildProcess(
                    Products.send, ["--endpoint", cluster.clients, "--route", "direct", "--timeout", "20", "counter/a", "increment"],
                    outputIn: cluster.directory, label: "fsm-send")
                defer { send.stop(grace: .seconds(1)) }
                try await waitUntil("data to run as a new process", timeout: .seconds(30)) {
                    (try? await cluster.workerPID("data")).map { $0 != victim } ?? false
                }
                let status = await send.waitForExit(timeout: .seconds(40))
                #expect(status == 0, "fsm-send: \(send.stdout)\n\(send.stderr)")
                // Applied once, on the restarted worker, from the state the store kept.
                #expect(send.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == #"{"count":2}"#, "\(send.stdout)\n\(send.stderr)")
                #expect(try await cluster.state("counter/a") == json(#"{"count":2}"#))
            }
        }
    }
}
