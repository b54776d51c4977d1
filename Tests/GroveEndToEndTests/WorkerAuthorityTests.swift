import Foundation
import GroveWire
import Testing

extension EndToEnd {
    /// Issue 34, attack 2 and the registration half of attack 7: a worker holding a valid key
    /// for one group speaks only for what that group hosts, cannot take another worker's
    /// routing id, and cannot make itself irreplaceable with a start time in the future. Tried
    /// with real processes over tcp with CURVE, the hostile worker a pyzmq peer (``RoguePeer``).
    @Suite(.timeLimit(.minutes(3)))
    struct WorkerAuthorityTests {
        /// `main` hosts the sign-in, the loader its route starts and keyed counters; `auth-io`
        /// runs the io, held for two minutes so that a call stays in flight; `edge` and `side` are
        /// external groups with keys of their own, hosting keyed tallies and notes.
        static let topology = TopologyFile(
            name: "authority", transport: .tcp,
            workers: [.init(name: "main"), .init(name: "auth-io", arguments: ["--io-delay-ms", "120000"]),
                      .init(name: "edge", external: true, key: "keys/edge.key"),
                      .init(name: "side", external: true, key: "keys/side.key")],
            machines: [.init(name: "auth", type: "AuthFlow", worker: "main"),
                       .init(name: "loader", type: "DataLoader", worker: "main"),
                       .init(name: "counter", type: "Counter", worker: "main", keyed: true),
                       .init(name: "tally", type: "Counter", worker: "edge", keyed: true),
                       .init(name: "notes", type: "Counter", worker: "side", keyed: true)],
            io: [("Authenticate", "auth-io"), ("VerifyTwoFactor", "auth-io"), ("FetchData", "auth-io")],
            ioTimeouts: ["Authenticate": 300_000, "FetchData": 300_000],
            routes: [.init(from: "auth", when: "signedIn", to: "loader", event: "load")],
            // A slow heartbeat: a peer that takes a dead worker's connection has a second before
            // the coordinator next sends to it (what bf2b560 gave it), however slow the machine.
            heartbeat: (intervalMs: 1000, timeoutMs: 5000),
            security: """
                { "coordinatorKey": "keys/coordinator.key_secret",
                  "clients": [ { "key": "keys/ops.key", "roles": ["read", "send", "admin"] } ] }
                """,
            keyPairs: ["coordinator", "edge", "side", "ops"],
            clientKey: "ops"
        )

        static let admin = #"{"id":"0","name":"Admin","email":"admin@example.com"}"#

        /// Kills external worker `name` (SIGKILL) and waits until the coordinator no longer
        /// counts it registered.
        static func kill(_ name: String, in cluster: Cluster) async throws {
            let worker = try #require(cluster.externalWorker(name))
            worker.signal(SIGKILL)
            _ = await worker.waitForExit(timeout: .seconds(10))
            try await waitUntil("\(name) to be lost", timeout: .seconds(20)) {
                (try? await cluster.list())?.workers.first { $0.name == name }?.registered == false
            }
        }

        /// The watch lines that carry the forged user.
        static func forged(_ watcher: EventWatcher) -> [WatchEvent] {
            watcher.events.filter { "\($0.payload)".contains("Admin") }
        }

        @Test func aWorkerOfAnotherGroupSpeaksForNothingItDoesNotHost() async throws {
            try await withCluster(Self.topology) { cluster in
                let watcher = try await cluster.watch()
                // A sign-in whose Authenticate call stays in flight on auth-io.
                try await cluster.send("auth", "startLogin")
                try await cluster.send("auth", #"{"updateEmail":{"_0":"ada@example.com"}}"#)
                try await cluster.send("auth", #"{"updatePassword":{"_0":"secret-1"}}"#)
                try await cluster.send("auth", "login")
                try await watcher.waitFor("Authenticate to start") { $0.isEffect("auth", "started") }
                #expect(try await cluster.send("counter/a", "increment")["count"] == .integer(1))
                let listed = try await cluster.list().machines.map(\.instances)
                let mainPID = try await cluster.workerPID("main")

                // The edge process turns hostile: with its own, valid key it registers as edge
                // and speaks for auth, which main hosts, and for main's keyed counters.
                try await Self.kill("edge", in: cluster)
                let authenticated = #"{"authenticated":{"_0":\#(Self.admin)}}"#
                let steps: [RoguePeer.Step] = [
                    .init(kind: 0x40, address: "auth", payload: #"{"address":"auth","worker":"edge","state":\#(authenticated)}"#),
                    .init(kind: 0x40, address: "auth", payload: #"{"address":"auth","worker":"main","state":\#(authenticated)}"#),
                    .init(kind: 0x43, address: "auth", payload: #"{"output":{"signedIn":{"_0":\#(Self.admin)}}}"#),
                    .init(kind: 0x44, address: "auth", payload: #"{"address":"auth","reason":"stopped","state":\#(authenticated),"worker":"main"}"#),
                    .init(kind: 0x31, address: "auth", payload: "\u{0}" + Self.admin, callIDs: true),
                    .init(kind: 0x24, address: "edge", payload: #"{"instances":["counter/forged-1","counter/forged-2"]}"#),
                ]
                let rogue = try await RoguePeer.run(cluster, mode: "worker", key: "edge", endpoint: try await cluster.workersEndpoint(),
                                                    routingID: "edge", name: "edge", machineTypes: ["Counter"], steps: steps, hold: 2)
                try #require(rogue.welcomed, "the hostile edge registers with its own key: \(rogue)")

                // Nobody saw the forged user: not the watcher, not a snapshot.
                let probe = try await cluster.send("counter/after", "increment")
                #expect(probe["count"] == .integer(1))
                try await watcher.waitFor("the probe after the attack") { $0.topic == "state:counter/after" }
                #expect(Self.forged(watcher).isEmpty, "watchers saw the forgery: \(Self.forged(watcher))")
                let snapshot = try await RoguePeer.run(cluster, mode: "client", key: "ops", endpoint: cluster.clients,
                                                       steps: [.init(kind: 0x0A, address: "", payload: #"{"prefixes":[]}"#)], hold: 0)
                let states = try #require(snapshot.answer, "no snapshot: \(snapshot)")
                #expect(states.contains("state:counter/after") && !states.contains("Admin"), "\(states)")
                // The route did not fire: loader is idle. auth still waits for its real call.
                #expect("\(try await cluster.state("loader"))".contains("idle"))
                #expect("\(try await cluster.state("auth"))".contains("authenticating"))
                #expect(watcher.effects(of: "auth", "completed").isEmpty)
                // The listing is as before, but for the counter made since.
                let after = try await cluster.list().machines.map { $0.instances.filter { $0 != "counter/after" } }
                #expect(after == listed)
                // main keeps serving, the same process.
                #expect(try await cluster.send("counter/a", "increment")["count"] == .integer(2))
                #expect(try await cluster.workerPID("main") == mainPID)

                // Each forgery was refused, naming its kind, and logged without its payload.
                for kind in ["state-changed", "output", "machine", "io-result", "instances"] {
                    #expect(!rogue.refusals(of: kind).isEmpty, "\(kind) was not refused: \(rogue)")
                }
                #expect(rogue.refusals(of: "state-changed").count == 2)
                for kind in ["state-changed", "output", "machine", "io-result", "instances"] {
                    try await cluster.waitForLog("refused \(kind) from worker edge")
                }
                let leaked = cluster.log.split(separator: "\n").filter { $0.contains("refused") && $0.contains("Admin") }
                #expect(leaked.isEmpty, "a refusal logged a payload: \(leaked)")
            }
        }

        /// The second attacker's review: the edge key started Authenticate in its own tally's
        /// name, a password oracle around AuthFlow's lockout. The io[] entries name no machines,
        /// so a machine on an external group starts none of them; the call fails back to it.
        @Test func anExternalGroupsMachineStartsNoIORequestItsEntryDoesNotName() async throws {
            try await withCluster(Self.topology) { cluster in
                let watcher = try await cluster.watch()
                try await Self.kill("edge", in: cluster)
                // The io-request head: the name and the effect id, each after its length (UInt16).
                func head(_ text: String) -> String { "\u{0}" + String(UnicodeScalar(UInt8(text.utf8.count))) + text }
                let guess = head("Authenticate") + head(#""guess""#) + #"{"email":"ada@example.com","password":"guess-1"}"#
                let rogue = try await RoguePeer.run(cluster, mode: "worker", key: "edge", endpoint: try await cluster.workersEndpoint(),
                                                    routingID: "edge", name: "edge", machineTypes: ["Counter"],
                                                    steps: [.init(kind: 0x30, address: "tally/k", payload: guess)], hold: 2)
                try #require(rogue.welcomed, "the hostile edge registers with its own key: \(rogue)")
                try await cluster.waitForLog("whose machines start io request 'Authenticate' only")
                #expect((rogue.kinds["0x31"] ?? 0) >= 1, "the call failed back to it: \(rogue)")
                #expect(watcher.events.filter { $0.topic.hasPrefix("effect:tally") }.isEmpty, "an io call started for tally")
            }
        }

        @Test func aWorkerClaimingAStartInTheFutureIsReplacedByTheNextProcess() async throws {
            try await withCluster(Self.topology) { cluster in
                try await Self.kill("edge", in: cluster)
                // A registration with edge's key, claiming to start ten years from now, then gone.
                let future = Int64(Date().timeIntervalSince1970 * 1000) + 10 * 365 * 86_400_000
                let rogue = try await RoguePeer.run(cluster, mode: "worker", key: "edge", endpoint: try await cluster.workersEndpoint(),
                                                    routingID: "edge", name: "edge", machineTypes: ["Counter"], startedAtMs: future,
                                                    steps: [], hold: 0.5)
                try #require(rogue.welcomed, "\(rogue)")
                try await waitUntil("the claimed-future process to be lost", timeout: .seconds(20)) {
                    (try? await cluster.list())?.workers.first { $0.name == "edge" }?.registered == false
                }
                // The operator starts edge again: the coordinator takes it as the newer process.
                let again = try await cluster.startExternalWorker("edge", arguments: [
                    "--key-file", cluster.keyPath("edge", secret: true), "--coordinator-key", cluster.keyPath("coordinator", secret: false)])
                try await waitUntil("the restarted edge to hold its name", timeout: .seconds(20)) {
                    guard again.isRunning else { throw HarnessError("edge exited with \(again.exitStatus ?? -1): \(again.stderr.suffix(2000))") }
                    return (try? await cluster.workerPID("edge")) == again.pid
                }
                #expect(try await cluster.send("tally/a", "increment")["count"] == .integer(1))
                #expect(again.isRunning && !again.stderr.contains("superseded"), "\(again.stderr.suffix(2000))")
            }
        }

        @Test func aPeerThatTakesADeadWorkersConnectionReceivesNothingMeantForIt() async throws {
            try await withCluster(Self.topology) { cluster in
                let watcher = try await cluster.watch()
                #expect(try await cluster.send("tally/x", "increment")["count"] == .integer(1))
                let edge = try #require(cluster.externalWorker("edge"))
                let go = cluster.directory.appendingPathComponent("go")
                // side's key, connecting under edge's old routing id (its name, what anyone can
                // learn from a listing) the moment edge dies, and speaking for edge's machine.
                let forged = #"{"address":"tally/x","worker":"edge","state":{"count":999}}"#
                async let taken = RoguePeer.run(cluster, mode: "peer", key: "side", endpoint: try await cluster.workersEndpoint(),
                                                routingID: "edge", steps: [.init(kind: 0x40, address: "tally/x", payload: forged)],
                                                hold: 4, goFile: go)
                try await waitUntil("the peer to be ready to connect", timeout: .seconds(20)) {
                    FileManager.default.fileExists(atPath: go.path + ".ready")
                }
                // Once edge is dead, its connection gone with it: the peer connects at once, well
                // before the coordinator's next heartbeat to edge (a second apart here).
                edge.signal(SIGKILL)
                _ = await edge.waitForExit(timeout: .seconds(10))
                _ = FileManager.default.createFile(atPath: go.path, contents: nil)
                // A client's event meant for edge, with a secret in it, while the peer listens.
                let sent = try await cluster.fsmSend(["tally/x", #"{"note":{"_0":"hunter2"}}"#, "--timeout", "2"])
                let peer = try await taken
                #expect(sent.status != 0, "edge is dead; nobody may have answered: \(sent)")
                // The peer received nothing but the refusal of what it sent itself.
                let meantForEdge = peer.kinds.keys.filter { $0 != "0x12" }.sorted()
                #expect(meantForEdge.isEmpty, "the peer received what was meant for edge: \(peer)")
                let notRefusals = peer.errors.filter { $0.code != .unavailable }
                #expect(notRefusals.isEmpty, "\(peer)")
                // And spoke for nothing.
                let count999 = watcher.events.filter { $0.topic == "state:tally/x" && "\($0.payload)".contains("999") }
                #expect(count999.isEmpty, "\(count999)")
                try await cluster.waitForLog("worker edge lost")
            }
        }
    }
}
