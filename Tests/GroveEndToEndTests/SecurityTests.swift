import Foundation
import GroveWire
import Testing

extension EndToEnd {
    /// Issue 20: CURVE on tcp, worker keys and client roles, tried with real processes and pyzmq
    /// peers. ipc kept to the launching user: ``LocalEndpointTests``.
    @Suite(.timeLimit(.minutes(2)))
    struct SecurityTests {
        static let curve = TopologyFile(
            name: "curve", transport: .tcp,
            workers: [.init(name: "main"), .init(name: "auth-io"), .init(name: "edge", external: true, key: "keys/edge.key")],
            machines: [.init(name: "auth", type: "AuthFlow", worker: "main"),
                       .init(name: "counter", type: "Counter", worker: "edge", keyed: true)],
            io: [("Authenticate", "auth-io"), ("VerifyTwoFactor", "auth-io")],
            security: """
                { "coordinatorKey": "keys/coordinator.key_secret",
                  "clients": [ { "key": "keys/ops.key", "roles": ["read", "send", "admin"] },
                               { "key": "keys/reader.key", "roles": ["read"] },
                               { "key": "keys/sender.key", "roles": ["read", "send"], "machines": ["counter*"] } ] }
                """,
            keyPairs: ["coordinator", "edge", "ops", "reader", "sender"],
            clientKey: "ops"
        )

        @Test func clientsGetWhatTheirRolesAllow() async throws {
            try await withCluster(Self.curve) { cluster in
                // ops (the harness's key) may do everything, through CURVE end to end.
                #expect(try await cluster.send("counter/a", "increment")["count"] == .integer(1))
                // reader: reads, but neither sends nor stops.
                #expect(try await cluster.fsmSend(["state", "counter/a"], as: "reader").status == 0)
                let send = try await cluster.fsmSend(["counter/a", "increment"], as: "reader")
                #expect(send.status == 4, "\(send)")
                #expect(send.stderr.contains("forbidden") && send.stderr.contains("send role"), "\(send)")
                let stop = try await cluster.fsmSend(["stop", "counter/a"], as: "reader")
                #expect(stop.status == 4 && stop.stderr.contains("admin role"), "\(stop)")
                // sender: events on counter* only, no stop.
                #expect(try await cluster.fsmSend(["counter/a", "increment"], as: "sender").status == 0)
                #expect(try await cluster.fsmSend(["auth", "startLogin"], as: "sender").status == 4)
                #expect(try await cluster.fsmSend(["stop", "counter/a"], as: "sender").status == 4)
                #expect(try await cluster.state("counter/a")["count"] == .integer(2))
                // ops stops.
                #expect(try await cluster.fsmSend(["stop", "counter/a"]).status == 0)
                // No key at all: the handshake never completes, so nothing is answered.
                let anonymous = try await cluster.fsmSend(["state", "counter/a", "--timeout", "1"], as: nil)
                #expect(anonymous.status == 3, "\(anonymous)")
            }
        }

        /// A DEALER trying `script`'s attack on the workers endpoint: prints what it received.
        static func rogue(_ cluster: Cluster, key: String?, routingID: String, sends frames: String) async throws -> CommandResult {
            let workers = try await cluster.workersEndpoint()
            let keyLines = key.map { key in
                """
                pub, sec = zmq.auth.load_certificate("\(cluster.keyPath(key, secret: true))")
                """
            } ?? "pub, sec = zmq.curve_keypair()"
            let script = """
                import zmq, zmq.auth
                ctx = zmq.Context()
                server, _ = zmq.auth.load_certificate("\(cluster.keyPath("coordinator", secret: false))")
                \(keyLines)
                s = ctx.socket(zmq.DEALER)
                s.linger = 0
                s.curve_serverkey, s.curve_publickey, s.curve_secretkey = server, pub, sec
                s.setsockopt(zmq.ROUTING_ID, b"\(routingID)")
                s.connect("\(workers)")
                for frames in \(frames):
                    s.send_multipart(frames)
                received, kinds = 0, set()
                while s.poll(1500):
                    kinds.add("0x%02x" % s.recv_multipart()[0][2])
                    received += 1
                print("received", received, "kinds", " ".join(sorted(kinds)))
                """
            let file = cluster.directory.appendingPathComponent("rogue.py")
            try script.write(to: file, atomically: true, encoding: .utf8)
            return try await runCommand(URL(fileURLWithPath: "/usr/bin/env"), ["python3", file.path], in: cluster.directory)
        }

        /// A registration message in protocol v1, as python bytes.
        static func registration(_ name: String) -> String {
            let payload = #"{"worker":"\#(name)","pid":4242,"machineTypes":["AuthFlow","Counter"],"ioHandlers":["Authenticate","VerifyTwoFactor"]}"#
            return #"[[bytes([0x47, 1, 0x20, 0]) + bytes(8), b"\#(name)", b'\#(payload)']]"#
        }

        @Test func workersAreWhoTheirKeysSay() async throws {
            try await withCluster(Self.curve) { cluster in
                let before = try await cluster.workerPID("auth-io")
                // An unknown key: the handshake is refused, nothing at all comes back.
                let stranger = try await Self.rogue(cluster, key: nil, routingID: "auth-io", sends: Self.registration("auth-io"))
                #expect(stranger.stdout.contains("received 0"), "\(stranger)")
                try await cluster.waitForLog("refused", "127.0.0.1", "is not one the topology accepts")
                // A client's key is no worker key.
                let client = try await Self.rogue(cluster, key: "ops", routingID: "auth-io", sends: Self.registration("auth-io"))
                #expect(client.stdout.contains("received 0"), "\(client)")
                try await cluster.waitForLog("refused", "it is a client key")
                // The key of another worker group cannot take auth-io's name, nor displace it with
                // garbage under its name: auth-io's routing id is another, so this peer is a
                // stranger, told what is wrong with what it sent and nothing else (issue 34).
                let other = try await Self.rogue(cluster, key: "edge", routingID: "auth-io",
                                                 sends: #"[[b"garbage"]] * 100 + "# + Self.registration("auth-io"))
                #expect(other.stdout.contains("received 101 kinds 0x12\n"), "only errors: \(other)")
                try await cluster.waitForLog("refused", "a registration as auth-io came with the key of worker group 'edge'")
                // auth-io still serves the sign-in, from the same process: nothing was displaced.
                #expect(try await cluster.workerPID("auth-io") == before)
                try await cluster.send("auth", "startLogin")
                try await cluster.send("auth", #"{"updateEmail":{"_0":"ada@example.com"}}"#)
                try await cluster.send("auth", #"{"updatePassword":{"_0":"secret-1"}}"#)
                try await cluster.send("auth", "login")
                try await cluster.waitForState("auth", "past authenticating") { state in
                    !"\(state)".contains("authenticating")
                }
                #expect(!cluster.log.contains("registered again"), "a rogue displaced a worker:\n\(cluster.log)")
            }
        }

        /// An external worker killed with SIGKILL comes back with its key and takes its name again:
        /// no handover is needed, the dead connection is gone with its process.
        @Test func anExternalWorkerKilledComesBackWithItsKey() async throws {
            try await withCluster(Self.curve) { cluster in
                #expect(try await cluster.send("counter/k", "increment")["count"] == .integer(1))
                let first = try #require(cluster.externalWorker("edge"))
                let before = try await cluster.workerPID("edge")
                first.signal(SIGKILL)
                _ = await first.waitForExit(timeout: .seconds(5))
                let again = try await cluster.startExternalWorker("edge", arguments: [
                    "--key-file", cluster.keyPath("edge", secret: true), "--coordinator-key", cluster.keyPath("coordinator", secret: false)])
                try await eventually("edge to register again with its key") { () async throws -> Int32? in
                    let pid = try? await cluster.workerPID("edge")
                    return pid.flatMap { $0 != before && $0 == again.pid ? $0 : nil }
                }
                // Its machines start over (no durability yet), and serve.
                #expect(try await cluster.send("counter/k", "increment")["count"] == .integer(1))
            }
        }
    }
}
