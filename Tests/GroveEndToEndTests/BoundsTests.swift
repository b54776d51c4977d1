import Foundation
import GroveWire
import Testing

extension EndToEnd {
    /// Issue 34, attacks 4 and 5 and the grants of 7, scaled down, against the real processes
    /// over CURVE (docs/SECURITY.md, "Bounds before work"): what a client with `send` on
    /// `counter*` only, or a watcher with a `read` key, can make the coordinator keep.
    @Suite(.timeLimit(.minutes(4)))
    struct BoundsTests {
        static let topology: TopologyFile = {
            var topology = TopologyFile(
                name: "bounds", transport: .tcp, workers: [.init(name: "main")],
                machines: [.init(name: "counter", type: "Counter", worker: "main", keyed: true)],
                security: """
                    { "coordinatorKey": "keys/coordinator.key_secret",
                      "clients": [ { "key": "keys/ops.key", "roles": ["read", "send", "admin"] },
                                   { "key": "keys/reader.key", "roles": ["read"] },
                                   { "key": "keys/watcher.key", "roles": ["read"] },
                                   { "key": "keys/sender.key", "roles": ["send"], "machines": ["counter/e*", "counter/k*", "counter/a*"] } ] }
                    """,
                keyPairs: ["coordinator", "ops", "reader", "watcher", "sender"],
                clientKey: "ops")
            topology.clientOutbox = 20
            return topology
        }()

        /// A pyzmq peer with key `key`: the lines that open its CURVE socket `s` of `type` to
        /// `endpoint`, then `body`.
        static func python(_ cluster: Cluster, key: String, type: String, endpoint: String, options: String = "", _ body: String) -> String {
            """
            import json, os, sys, time, zmq, zmq.auth
            ctx = zmq.Context()
            server, _ = zmq.auth.load_certificate("\(cluster.keyPath("coordinator", secret: false))")
            pub, sec = zmq.auth.load_certificate("\(cluster.keyPath(key, secret: true))")
            s = ctx.socket(zmq.\(type))
            s.linger = 0
            \(options)
            s.curve_serverkey, s.curve_publickey, s.curve_secretkey = server, pub, sec
            s.connect("\(endpoint)")
            d = "\(cluster.directory.path)"
            def header(kind, corr, flags=0): return bytes([0x47, 1, kind, flags]) + corr.to_bytes(8, "big")
            def wait_for(name):
                while not os.path.exists(os.path.join(d, name)): time.sleep(0.05)
            \(body)
            """
        }

        static func start(_ script: String, named name: String, in cluster: Cluster) async throws -> ChildProcess {
            let file = cluster.directory.appendingPathComponent(name + ".py")
            try script.write(to: file, atomically: true, encoding: .utf8)
            return try await ChildProcess(URL(fileURLWithPath: "/usr/bin/env"), ["python3", file.path], outputIn: cluster.directory,
                                          label: name)
        }

        static func touch(_ name: String, in cluster: Cluster) throws {
            try Data().write(to: cluster.directory.appendingPathComponent(name))
        }

        /// Attack 4: a client with `send` on `counter*` that stops reading, then sends requests
        /// for distinct huge addresses. On bf2b560 each was owed a `busy` that kept its address
        /// (RSS 35 → 607 MiB for 60 of 8 MiB) and echoed it back; now the address is refused
        /// before anything of it is kept, the refusal is owed in its place, named, addressless.
        @Test func aClientThatDoesNotReadCannotMakeTheCoordinatorKeepHugeAddresses() async throws {
            try await withCluster(Self.topology) { cluster in
                let attacks = 40, size = 512 << 10
                let script = Self.python(cluster, key: "sender", type: "DEALER", endpoint: cluster.clients, options: "s.rcvhwm = 5", """
                    corr = 0
                    slow = b"counter/" + b"k" * 800
                    # Stop reading: no-wait events whose replies carry a long address fill the
                    # buffers between the coordinator and this client, until it falls behind.
                    while corr < 200000 and not os.path.exists(os.path.join(d, "behind")):
                        for _ in range(2000):
                            corr += 1
                            s.send_multipart([header(1, corr, 2), slow, b'"increment"'])
                        time.sleep(0.2)
                    first = corr + 1
                    for i in range(\(attacks)):
                        corr += 1
                        s.send_multipart([header(1, corr), b"counter/" + b"a" * \(size) + str(i).encode(), b'"increment"'])
                    print("attack sent", flush=True)
                    wait_for("go")
                    answers, attack = {}, []
                    deadline = time.time() + 120
                    while time.time() < deadline:
                        if not s.poll(500 if len(answers) >= corr else 20000): break
                        h, addr, payload = s.recv_multipart()
                        c = int.from_bytes(h[4:12], "big")
                        answers[c] = answers.get(c, 0) + 1
                        if c >= first:
                            e = json.loads(payload) if h[2] == 0x12 else {}
                            attack.append({"code": e.get("code"), "message": e.get("message", ""), "address": len(addr),
                                           "bytes": len(h) + len(addr) + len(payload)})
                    print(json.dumps({"sent": corr, "answered": len(answers), "twice": [c for c, n in answers.items() if n != 1][:10],
                                      "attack": attack}), flush=True)
                    """)
                let attacker = try await Self.start(script, named: "attacker", in: cluster)
                defer { _ = attacker.stop() }
                try await cluster.waitForLog("not reading its replies", "answered busy", timeout: .seconds(90))
                try Self.touch("behind", in: cluster)
                try await waitUntil("the attack to be sent", timeout: .seconds(60)) {
                    guard attacker.isRunning || attacker.stdout.contains("attack sent") else {
                        throw HarnessError("the attacker exited: \(attacker.stderr)")
                    }
                    return attacker.stdout.contains("attack sent")
                }
                // Meanwhile the coordinator answers everyone else.
                let listing = try await cluster.fsmSend(["list"], timeout: .seconds(10))
                #expect(listing.status == 0, "\(listing)")
                try Self.touch("go", in: cluster)
                _ = await attacker.waitForExit(timeout: .seconds(150))
                let line = try #require(attacker.stdout.split(separator: "\n").last, "the attacker's summary; stderr: \(attacker.stderr)")
                let summary = try #require(try JSONValue(parsing: Data(line.utf8)).objectValue)
                #expect(summary["answered"] == summary["sent"], "every request answered")
                #expect(summary["twice"] == .array([]), "none answered twice")
                guard case .array(let replies)? = summary["attack"] else {
                    Issue.record("no replies to the big requests in the summary: \(line)")
                    return
                }
                #expect(replies.count == attacks)
                for reply in replies {
                    let fields = reply.objectValue ?? [:]
                    #expect(fields["code"] == .string("malformed-frame"), "\(fields)")
                    #expect(fields["message"]?.stringValue?.contains("limits.addressBytes") == true, "\(fields)")
                    #expect(fields["address"] == .integer(0), "the address is not echoed back: \(fields["bytes"] ?? .null) bytes")
                }
                #expect(cluster.launch.isRunning)
                #expect(try await cluster.send("counter/after", "increment")["count"] == .integer(1))
            }
        }

        /// A watcher with key `key` (pyzmq XSUB) sending `subscriptions`, then `last`, printing
        /// each publication that reaches it within `seconds` of the test's `go` (or until the
        /// first, with `untilFirst`), then how many.
        static func watcher(_ cluster: Cluster, events: String, key: String = "watcher", _ subscriptions: String,
                            then last: String = #"b"state:counter/""#, seconds: Int = 4, untilFirst: Bool = false) -> String {
            python(cluster, key: key, type: "XSUB", endpoint: events, """
                for prefix in \(subscriptions):
                    s.send(b"\\x01" + prefix)
                s.send(b"\\x01" + \(last))
                print("subscribed", flush=True)
                wait_for("go")
                received = 0
                end = time.time() + \(seconds)
                while time.time() < end and not (\(untilFirst ? "True" : "False") and received):
                    if s.poll(200):
                        s.recv_multipart()
                        received += 1
                        print("got", received, flush=True)
                print("received", received, flush=True)
                """)
        }

        /// Attack 5, scaled: one subscription far longer than any topic (64 MiB on bf2b560 took
        /// the coordinator to 2 GiB). Now ZeroMQ drops the watcher as it reads the frame's length
        /// (`ZMQ_MAXMSGSIZE` on the events endpoint), so it never gets a publication; honest
        /// watchers and clients are served throughout.
        @Test func aSubscriptionLongerThanAnyTopicDropsItsWatcher() async throws {
            try await withCluster(Self.topology) { cluster in
                let honest = try await cluster.watch(["state:counter/"])
                let events = try await cluster.list().events
                let attacker = try await Self.start(Self.watcher(cluster, events: events, #"[b"state:" + b"x" * (256 << 10)]"#),
                                                    named: "big-subscription", in: cluster)
                defer { _ = attacker.stop() }
                // The longest prefix a topic can have (machine: and an address of 1024 bytes) is fine.
                let longest = "counter/" + String(repeating: "l", count: 1016)
                let patient = try await Self.start(Self.watcher(cluster, events: events, key: "reader", #"[b"machine:" + b"m" * 1024]"#,
                                                                then: #"b"state:\#(longest)""#, seconds: 30, untilFirst: true),
                                                    named: "longest-subscription", in: cluster)
                defer { _ = patient.stop() }
                try await waitUntil("the subscriptions to be sent", timeout: .seconds(30)) {
                    attacker.stdout.contains("subscribed") && patient.stdout.contains("subscribed")
                }
                // Long enough for a subscription to reach the coordinator (the harness's own
                // watcher shows when one has), then publications on counter/.
                _ = try await cluster.watch(["state:counter/x"])
                try Self.touch("go", in: cluster)
                for index in 0..<5 { _ = try await cluster.send("counter/b\(index)", "increment") }
                try await waitUntil("the watcher of the longest prefix to hear it", timeout: .seconds(20), interval: .milliseconds(300)) {
                    _ = try await cluster.send(longest, "increment")
                    return patient.stdout.contains("got")
                }
                try await honest.waitFor("states of counter/b*", count: 5) { $0.topic.hasPrefix("state:counter/b") }
                #expect(try await cluster.fsmSend(["list"], timeout: .seconds(10)).status == 0)
                _ = await attacker.waitForExit(timeout: .seconds(30))
                #expect(attacker.stdout.contains("received 0"), "the watcher was dropped: \(attacker.stdout) \(attacker.stderr)")
                _ = await patient.waitForExit(timeout: .seconds(30))
                #expect(!patient.stdout.contains("received 0"), "the longest prefix is served: \(patient.stdout) \(patient.stderr)")
            }
        }

        /// Attack 5's other half: many distinct prefixes from one key. Past
        /// `limits.watcherSubscriptions` the key is refused on the events endpoint and every
        /// watcher's connection is reset, which frees what libzmq holds for them; the honest
        /// watcher reconnects and keeps receiving.
        @Test func aWatcherPastItsSubscriptionsIsRefusedAndOthersGoOn() async throws {
            try await withCluster(Self.topology) { cluster in
                let honest = try await cluster.watch(["state:counter/"])
                let events = try await cluster.list().events
                let attacker = try await Self.start(
                    Self.watcher(cluster, events: events, #"[b"state:x%d" % i for i in range(200)]"#), named: "many-subscriptions", in: cluster)
                defer { _ = attacker.stop() }
                try await cluster.waitForLog("limits.watcherSubscriptions", "refused on the events endpoint", timeout: .seconds(30))
                try await cluster.waitForLog("reset", "connection(s) to the events endpoint")
                try Self.touch("go", in: cluster)
                // The honest watcher is back (its subscriptions sent again by ZeroMQ on reconnecting).
                try await waitUntil("the honest watcher to hear counter/c again", timeout: .seconds(20), interval: .milliseconds(300)) {
                    _ = try await cluster.send("counter/c", "increment")
                    return !honest.events(where: { $0.topic == "state:counter/c" }).isEmpty
                }
                #expect(try await cluster.fsmSend(["list"], timeout: .seconds(10)).status == 0)
                _ = await attacker.waitForExit(timeout: .seconds(30))
                #expect(attacker.stdout.contains("received 0"), "the refused watcher gets nothing: \(attacker.stdout)")
                try await cluster.waitForLog("refused", "limits.watcherSubscriptions prefixes; it is refused until an admin lifts it")
                // An admin sees the refused key with the suspensions and lifts it: the key watches again.
                let listed = try await cluster.fsmSend(["suspensions"])
                #expect(listed.status == 0 && listed.stdout.contains("watcher refused"), "\(listed)")
                let lifted = try await cluster.fsmSend(["suspensions", "lift", cluster.keyPath("watcher", secret: false)])
                #expect(lifted.status == 0, "\(lifted) \(listed)")
                let again = try await Self.start(Self.watcher(cluster, events: events, "[]", seconds: 20, untilFirst: true),
                                                 named: "lifted-watcher", in: cluster)
                defer { _ = again.stop() }
                try await waitUntil("the lifted key to subscribe", timeout: .seconds(20)) { again.stdout.contains("subscribed") }
                try Self.touch("go", in: cluster)
                try await waitUntil("the lifted key to hear counter/d", timeout: .seconds(20), interval: .milliseconds(300)) {
                    _ = try await cluster.send("counter/d", "increment")
                    return again.stdout.contains("got")
                }
            }
        }

        /// `fsm-launch --check` prints the limits a topology sets, and the defaults of the others.
        @Test func checkListsTheLimits() async throws {
            let directory = try Cluster.makeDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            var topology = TopologyFile(name: "limits", transport: .ipc, workers: [.init(name: "main")],
                                        machines: [.init(name: "counter", type: "Counter", worker: "main", keyed: true)])
            topology.limits = #"{ "instancesPerMachine": 2000000, "addressBytes": 256, "batchEnvelopes": 500 }"#
            let file = try topology.write(in: directory)
            let check = try await runCommand(Products.launch, ["--check", file.path], in: directory)
            #expect(check.status == 0, "\(check)")
            #expect(check.stdout.contains("limits: addressBytes 256, payloadBytes 1048576, messageBytes 16777216, batchEnvelopes 500; instancesPerMachine 2000000;"),
                    "\(check.stdout)")
        }

        /// The grants of 7: a grant `counter/e*` compared bytes, lookups compare Swift strings,
        /// so `counter/e\u{301}` reached the instance `counter/é`. Now an address not in NFC is
        /// refused before any lookup, and `counter/é` stays out of reach.
        @Test func aGrantCannotReachAnInstanceThroughAnotherFormOfItsAddress() async throws {
            try await withCluster(Self.topology) { cluster in
                #expect(try await cluster.send("counter/é", "increment")["count"] == .integer(1))
                let decomposed = try await cluster.fsmSend(["counter/e\u{301}", "increment"], as: "sender")
                #expect(decomposed.status != 0, "\(decomposed)")
                #expect(decomposed.stderr.contains("Normalization Form C"), "\(decomposed)")
                let precomposed = try await cluster.fsmSend(["counter/é", "increment"], as: "sender")
                #expect(precomposed.status == 4 && precomposed.stderr.contains("forbidden"), "\(precomposed)")
                #expect(try await cluster.state("counter/é")["count"] == .integer(1), "counter/é was not reached")
                // What the grant does cover still works.
                #expect(try await cluster.fsmSend(["counter/e1", "increment"], as: "sender").status == 0)
            }
        }
    }
}
