import Foundation
import GroveWire
import Testing

extension EndToEnd {
    /// Issue 34, the superseded race seen under a slow client: fsm-launch killed and restarted a
    /// worker while the coordinator still held the name for the old process (its exit not
    /// processed yet, or a registration it sent before it died read late). What named the old
    /// process then reached the new one under the shared name: a heartbeat naming the old
    /// incarnation, its welcome, the refusal of its late registration. On bf2b560 the new
    /// process took the first for proof that a newer process had replaced it and exited 78, a
    /// final status: the supervisor gave up and escalated. The interleaving depends on timing in
    /// a real coordinator, so a pyzmq ROUTER plays the coordinator's side of it, in that order,
    /// to a real fsm-worker, before the worker's own welcome.
    @Suite(.timeLimit(.minutes(2)))
    struct SupersededRaceTests {
        static let standIn = """
            import json, struct, sys, time, zmq
            endpoint = sys.argv[1]
            ctx = zmq.Context()
            r = ctx.socket(zmq.ROUTER)
            r.linger = 0
            r.bind(endpoint)
            print("bound", flush=True)
            if not r.poll(20000):
                print("no registration"); sys.exit(1)
            ident, header, address, payload = r.recv_multipart()
            assert header[2] == 0x20, header
            correlation = struct.unpack(">Q", header[4:12])[0]
            mine = json.loads(payload)["incarnation"]
            old = mine - 1 if mine > 1 else mine + 1
            def send(kind, correlation, body):
                r.send_multipart([ident, struct.pack(">BBBBQ", 0x47, 1, kind, 0, correlation), b"w", json.dumps(body).encode()])
            welcome = {"machines": [], "remoteIO": [], "heartbeatIntervalMs": 100, "heartbeatTimeoutMs": 5000, "mailboxCapacity": 64}
            # What the coordinator sends under the name while it still holds it for the old process:
            send(0x22, 0, {"incarnation": old})
            send(0x12, old, {"code": "superseded", "message": "worker w incarnation %d (pid 1) is superseded: its process (pid 1) ended" % old})
            send(0x21, old, dict(welcome, incarnation=old))
            time.sleep(1)
            # Then the answer to its own registration, and a heartbeat naming it.
            send(0x21, correlation, dict(welcome, incarnation=mine))
            send(0x22, 0, {"incarnation": mine})
            # Until the worker has heartbeat three times (it stops short of that only if it
            # stopped): a bound to look within, not a time to meet, for a loaded machine.
            heard, deadline = 0, time.time() + 20
            while time.time() < deadline and heard < 3:
                if r.poll(100):
                    frames = r.recv_multipart()
                    if frames[1][2] == 0x22:
                        heard += 1
            print("heartbeats", heard, flush=True)
            """

        @Test func aNewProcessIsNotStoppedByWhatNamesTheProcessItReplaces() async throws {
            let directory = try Cluster.makeDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let script = directory.appendingPathComponent("stand-in.py")
            try Self.standIn.write(to: script, atomically: true, encoding: .utf8)
            let endpoint = "ipc://\(directory.path)/workers.ipc"
            let coordinator = try await ChildProcess(URL(fileURLWithPath: "/usr/bin/env"), ["python3", script.path, endpoint],
                                                     outputIn: directory, label: "stand-in")
            defer { _ = coordinator.stop(grace: .seconds(1)) }
            try await waitUntil("the stand-in to bind (is pyzmq installed? Scripts/test.sh installs it)", timeout: .seconds(15)) {
                coordinator.stdout.contains("bound") || !coordinator.isRunning
            }
            try #require(coordinator.isRunning, "\(coordinator.stderr)")
            let worker = try await ChildProcess(Products.worker, ["--name", "w", "--coordinator", endpoint,
                                                                  "--data-dir", directory.appendingPathComponent("data").path],
                                                outputIn: directory, label: "fsm-worker")
            defer { _ = worker.stop(grace: .seconds(2)) }
            let finished = await coordinator.waitForExit(timeout: .seconds(30))
            #expect(finished == 0, "stand-in: \(coordinator.stdout) \(coordinator.stderr)")
            #expect(worker.isRunning, "the new process stopped (status \(worker.exitStatus.map(String.init) ?? "?")): \(worker.stderr.suffix(2000))")
            #expect(!worker.stderr.contains("was superseded"), "\(worker.stderr.suffix(2000))")
            #expect(worker.stderr.contains("ignored a welcome for incarnation"), "\(worker.stderr.suffix(2000))")
            let heartbeats = coordinator.stdout.split(separator: "\n").first { $0.hasPrefix("heartbeats ") }
            #expect((heartbeats.flatMap { Int($0.dropFirst("heartbeats ".count)) } ?? 0) > 0,
                    "welcomed by its own welcome, it heartbeats: \(coordinator.stdout)")
        }
    }
}
