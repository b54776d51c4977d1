import Foundation
import GroveWire
import Testing

extension EndToEnd {
    /// The second review of issue 34: a key with `read` subscribed to everything and stopped
    /// reading while a machine's state grew to ~900 KB; ZeroMQ counted what waited for it in
    /// publications (`queues.watcherOutbox`, 100,000), not bytes, and the coordinator held
    /// 904 MiB after 1,000 of them. Now a publication carries at most `limits.publicationBytes`
    /// (past it, a numbered `publication-too-large` in its place) and the events socket holds as
    /// many as fit in `queues.watcherOutboxBytes` (docs/SECURITY.md, "Bounds before work").
    @Suite(.timeLimit(.minutes(4)))
    struct WatcherBytesTests {
        /// What the coordinator may hold for the watcher in this topology.
        static let watcherOutboxBytes = 8 << 20

        static let topology: TopologyFile = {
            var topology = TopologyFile(
                name: "watcher-bytes", transport: .tcp, workers: [.init(name: "main")],
                machines: [.init(name: "nav", type: "AppNavigator", worker: "main", keyed: true)],
                security: """
                    { "coordinatorKey": "keys/coordinator.key_secret",
                      "clients": [ { "key": "keys/ops.key", "roles": ["read", "send", "admin"] },
                                   { "key": "keys/watcher.key", "roles": ["read"] } ] }
                    """,
                keyPairs: ["coordinator", "ops", "watcher"],
                clientKey: "ops")
            topology.watcherOutboxBytes = Self.watcherOutboxBytes
            return topology
        }()

        /// The peak (`VmHWM`) and current (`VmRSS`) resident set of process `pid`, in bytes.
        static func memory(of pid: Int32) throws -> (peak: Int, now: Int) {
            let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
            func field(_ name: String) throws -> Int {
                let line = try #require(status.split(separator: "\n").first { $0.hasPrefix(name + ":") }, "no \(name) in \(status)")
                return try #require(Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]), "\(line)") * 1024
            }
            return (try field("VmHWM"), try field("VmRSS"))
        }

        /// A pyzmq client with the ops key that grows `nav/<key>`'s state by a title of `size`
        /// bytes, then changes it `changes` times without changing its size (a modal shown and
        /// dismissed), each event waiting for its state; prints `done <key>`.
        static func grow(_ cluster: Cluster, _ runs: [(key: String, size: Int, changes: Int)]) -> String {
            let plan = runs.map { #"("\#($0.key)", \#($0.size), \#($0.changes))"# }.joined(separator: ", ")
            return BoundsTests.python(cluster, key: "ops", type: "DEALER", endpoint: cluster.clients, """
                corr = 0
                def event(address, payload):
                    global corr
                    corr += 1
                    s.send_multipart([header(1, corr), address, payload])
                    while True:
                        h, _, reply = s.recv_multipart()
                        if int.from_bytes(h[4:12], "big") == corr: break
                    if h[2] != 0x10: sys.exit("event %d to %s: %r" % (corr, address, reply[:300]))
                for key, size, changes in [\(plan)]:
                    address = b"nav/" + key.encode()
                    title = "x" * size
                    event(address, json.dumps({"push": {"_0": {"detail": {"_0": {"id": "i", "title": title}}}}}).encode())
                    for i in range(changes):
                        event(address, b'{"presentModal":{"_0":{"settings":{}}}}' if i % 2 == 0 else b'{"dismissModal":{}}')
                    print("done", key, flush=True)
                """)
        }

        @Test func aWatcherThatDoesNotReadCostsTheCoordinatorItsBoundInBytes() async throws {
            try await withCluster(Self.topology) { cluster in
                let events = try await cluster.list().events
                // Subscribed to everything, then never reads: its ZeroMQ takes one message and its
                // kernel buffer a few kilobytes; everything else waits at the coordinator.
                let silent = try await BoundsTests.start(BoundsTests.python(cluster, key: "watcher", type: "SUB", endpoint: events,
                    options: "s.rcvhwm = 1\ns.rcvbuf = 4096\ns.setsockopt(zmq.SUBSCRIBE, b\"\")", """
                    print("subscribed", flush=True)
                    wait_for("done")
                    """), named: "silent-watcher", in: cluster)
                defer { _ = silent.stop() }
                try await waitUntil("the silent watcher to subscribe", timeout: .seconds(30)) { silent.stdout.contains("subscribed") }
                // A watcher that reads, of the big state only: it sees where each change stands.
                let reader = try await cluster.watch(["state:nav/big"])
                let before = try Self.memory(of: cluster.launch.pid)

                // 200 changes of a ~900 KB state (180 MB of publications as they were), then 1,500
                // of a state just under limits.publicationBytes (~91 MB): both well past the bound.
                let client = try await BoundsTests.start(Self.grow(cluster, [("big", 900_000, 200), ("under", 60_000, 1500)]),
                                                         named: "grower", in: cluster)
                defer { _ = client.stop() }
                _ = await client.waitForExit(timeout: .seconds(200))
                #expect(client.stdout.contains("done under"), "the client did not finish: \(client.stdout) \(client.stderr)")
                let after = try Self.memory(of: cluster.launch.pid)

                // The bound: what the watcher may be held, over what the coordinator had, with room
                // for the coordinator's own churn (each 900 KB state passes it once, and is freed).
                let bound = before.now + Self.watcherOutboxBytes + (48 << 20)
                let figures = "the coordinator's RSS was \(before.now >> 20) MiB before, peaked at \(after.peak >> 20) MiB, "
                    + "\(after.now >> 20) MiB after; the bound is \(bound >> 20) MiB"
                #expect(after.peak <= bound, "\(figures)")
                print(figures)

                // The reading watcher saw every change of the big state, each in its place: too
                // large to publish, its size and the setting, numbered without a gap.
                try await reader.waitFor("the big state's changes", count: 201, timeout: .seconds(60)) {
                    $0.topic == "state:nav/big" && $0.kind == "error"
                }
                let told = reader.events(where: { $0.topic == "state:nav/big" && $0.kind == "error" })
                #expect(reader.events(where: { $0.kind == "gap" }).isEmpty)
                let numbers = reader.events(where: { $0.topic == "state:nav/big" }).compactMap(\.sequence)
                let counted = Array(1...max(1, numbers.count))
                #expect(numbers == counted, "numbered from 1 without a gap: \(numbers)")
                let first = try #require(told.first?.payload.objectValue)
                #expect(first["code"] == .string("publication-too-large") && first["kind"] == .string("state-changed"), "\(first)")
                #expect(first["limit"] == .integer(65536))
                let bytes: Int64
                if case .integer(let count)? = first["bytes"] { bytes = count } else { bytes = 0 }
                #expect(bytes > 900_000, "\(first)")
                // Its state is a get away, and the coordinator serves the others meanwhile.
                let state = try await cluster.fsmSend(["state", "nav/big"])
                #expect(state.status == 0 && state.stdout.count > 900_000, "\(state.status) \(state.stderr)")
                #expect(try await cluster.fsmSend(["list"], timeout: .seconds(10)).status == 0)
                try BoundsTests.touch("done", in: cluster)
            }
        }
    }
}
