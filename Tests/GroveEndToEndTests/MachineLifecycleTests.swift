import Foundation
import GroveWire
import Testing

extension EndToEnd {
    /// A machine that ends (stopped here) is announced on `machine:<address>` with its final
    /// state; later events get `machine-ended`. Over ipc.
    @Suite(.timeLimit(.minutes(2)))
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
                #expect(after.stderr.contains("until an admin restarts it (fsm-send restart counter/a)"),
                        "says the address stays ended, and how to restart it: \(after.stderr)")
            }
        }

        /// `fsm-send watch` with a prefix no topic starts with says so instead of waiting in silence.
        @Test func watchingATopicThatCannotExistWarns() async throws {
            try await withCluster(Self.topology) { cluster in
                let watch = try await cluster.fsmSend(["watch", "states:counter", "state:counter", "--duration", "0.3"])
                #expect(watch.status == 0, "\(watch)")
                #expect(watch.stderr.contains("warning: no topic starts with 'states:counter'"), "\(watch)")
                #expect(!watch.stderr.contains("'state:counter'"), "a real topic is not warned about: \(watch)")
            }
        }

        /// `fsm-send --endpoint E list`: options before the subcommand's name belong to it, rather
        /// than the default `send` reading `list` as a machine address.
        @Test func optionsMayComeBeforeTheSubcommand() async throws {
            try await withCluster(Self.topology) { cluster in
                let list = try await runCommand(Products.send, ["--endpoint", cluster.clients, "--timeout", "5", "list"], in: cluster.directory)
                #expect(list.status == 0, "\(list)")
                #expect(list.stdout.contains(#""topology":"lifecycle""#))
                let sent = try await runCommand(Products.send, ["--endpoint", cluster.clients, "counter/b", "increment"], in: cluster.directory)
                #expect(sent.status == 0, "\(sent)")
                #expect(try JSONValue(parsing: Data(sent.stdout.utf8)) == json(#"{"count":1}"#))
                let state = try await runCommand(Products.send, ["--endpoint", cluster.clients, "state", "counter/b"], in: cluster.directory)
                #expect(try JSONValue(parsing: Data(state.stdout.utf8)) == json(#"{"count":1}"#))
            }
        }
    }
}

extension EndToEnd {
    /// Machines that end and come back (`machines[].onEnd`), and an admin's `fsm-send restart`.
    /// Over ipc; the refusal without the admin role over CURVE.
    @Suite(.timeLimit(.minutes(2)))
    struct MachineRestartTests {
        static let topology = TopologyFile(
            name: "on-end", transport: .ipc,
            workers: [.init(name: "edge")],
            machines: [.init(name: "counter", type: "Counter", worker: "edge", onEnd: "restart"),
                       .init(name: "form", type: "UserForm", worker: "edge", onEnd: "restart"),
                       .init(name: "forms", type: "UserForm", worker: "edge", keyed: true, onEnd: "remove"),
                       .init(name: "tally", type: "Counter", worker: "edge", keyed: true)]
        )

        /// The keyed instances of `machine` the coordinator lists. (A helper: no closure inside
        /// `#expect`, see `EventWatcher.effects`.)
        static func instances(of machine: String, in cluster: Cluster) async throws -> [String]? {
            try await cluster.list().machines.first { $0.name == machine }?.instances
        }

        /// UserForm's initial state, as JSON.
        static let emptyForm = json(#"{"editing":{"_0":{"name":"","email":"","phone":""},"errors":[]}}"#)

        @Test func aRestartingMachineComesBackAfterAStop() async throws {
            try await withCluster(Self.topology) { cluster in
                let watcher = try await cluster.watch(["machine:counter"])
                #expect(try await cluster.send("counter", #"{"add":{"_0":7}}"#) == json(#"{"count":7}"#))
                #expect(try await cluster.json(["stop", "counter"]) == json(#"{"count":7}"#))
                let ends = try await watcher.waitFor("counter's end") { $0.topic == "machine:counter" }
                #expect(ends.first?.reason == "stopped")
                // Until its restart a read answers the final state; then the initial one.
                try await cluster.waitForState("counter", "restarted") { $0 == json(#"{"count":0}"#) }
                #expect(try await cluster.send("counter", "increment") == json(#"{"count":1}"#))
            }
        }

        @Test func aRestartingMachineComesBackAfterATerminalState() async throws {
            try await withCluster(Self.topology) { cluster in
                #expect(try await cluster.send("form", #"{"updateName":{"_0":"Ada"}}"#)["editing"]?["_0"]?["name"] == json(#""Ada""#))
                #expect(try await cluster.send("form", "cancel") == json(#"{"cancelled":{}}"#))
                try await cluster.waitForState("form", "restarted") { $0 == Self.emptyForm }
                #expect(try await cluster.send("form", "validate") == json(#"{"validating":{"_0":{"name":"","email":"","phone":""}}}"#))
            }
        }

        @Test func aRemovedInstanceFreesItsKey() async throws {
            try await withCluster(Self.topology) { cluster in
                _ = try await cluster.send("forms/s-1", #"{"updateName":{"_0":"Ada"}}"#)
                _ = try await cluster.send("forms/s-2", #"{"updateName":{"_0":"Bo"}}"#)
                #expect(try await cluster.send("forms/s-1", "cancel") == json(#"{"cancelled":{}}"#))
                try await waitUntil("forms/s-1 to be no longer listed") {
                    try await Self.instances(of: "forms", in: cluster) == ["forms/s-2"]
                }
                // Gone: a read does not reach an ended instance but finds none.
                let read = try await cluster.fsmSend(["state", "forms/s-1"])
                #expect(read.status == 2 && read.stderr.contains("unknown-machine"), "\(read)")
                // The key's next event starts a new instance at the initial state: no "Ada".
                #expect(try await cluster.send("forms/s-1", "validate") == json(#"{"validating":{"_0":{"name":"","email":"","phone":""}}}"#))
                let listed = try await Self.instances(of: "forms", in: cluster)
                #expect(listed == ["forms/s-1", "forms/s-2"])
            }
        }

        @Test func anAdminRestartsAMachineWhateverItsPolicy() async throws {
            try await withCluster(Self.topology) { cluster in
                #expect(try await cluster.send("tally/a", #"{"add":{"_0":7}}"#) == json(#"{"count":7}"#))
                // Running: stopped after what was sent before, then started again.
                #expect(try await cluster.json(["restart", "tally/a"]) == json(#"{"count":0}"#))
                #expect(try await cluster.send("tally/a", "increment") == json(#"{"count":1}"#))
                // Stopped (onEnd stay): it stays ended until the admin's restart.
                _ = try await cluster.json(["stop", "tally/a"])
                let ended = try await cluster.fsmSend(["tally/a", "increment"])
                #expect(ended.status == 1 && ended.stderr.contains("machine-ended"), "\(ended)")
                #expect(try await cluster.json(["restart", "tally/a"]) == json(#"{"count":0}"#))
                #expect(try await cluster.send("tally/a", "increment") == json(#"{"count":1}"#))
                // A keyed instance no event started is not started by a restart.
                let never = try await cluster.fsmSend(["restart", "tally/never"])
                #expect(never.status == 2 && never.stderr.contains("unknown-machine"), "\(never)")
            }
        }

        /// `once` restarts at once, once a minute at most: its second end within 60 s leaves it
        /// ended.
        static let tuned = TopologyFile(
            name: "restart-settings", transport: .ipc,
            workers: [.init(name: "edge")],
            machines: [.init(name: "once", type: "Counter", worker: "edge", onEnd: "restart",
                             restart: #"{ "intensity": 1, "periodMs": 60000, "backoff": { "initialMs": 0, "maxMs": 0 } }"#),
                       .init(name: "forms", type: "UserForm", worker: "edge", keyed: true, durability: "state", onEnd: "remove")]
        )

        @Test func aMachinesRestartSettingsComeFromTheTopologyAndCheckPrintsThem() async throws {
            try await withCluster(Self.tuned) { cluster in
                let check = try await runCommand(Products.launch, ["--check", cluster.directory.appendingPathComponent("topology.json").path],
                                                 in: cluster.directory)
                #expect(check.status == 0, "\(check)")
                let lines = check.stdout.split(separator: "\n").map(String.init)
                #expect(lines.contains("machine once: Counter on edge; durability none; onEnd restart "
                                       + "(waits 0 ms doubling to 0 ms; stays ended past 1 end in 60000 ms)"), "\(check)")
                #expect(lines.contains("machine forms/<key>: UserForm on edge; durability state; onEnd remove"), "\(check)")
                #expect(lines.contains("machine probe: Counter on edge; durability none; onEnd stay"), "\(check)")

                #expect(try await cluster.send("once", #"{"add":{"_0":7}}"#) == json(#"{"count":7}"#))
                _ = try await cluster.json(["stop", "once"])
                try await cluster.waitForState("once", "restarted") { $0 == json(#"{"count":0}"#) }
                // The second end within the minute is one past its intensity of 1: it stays ended.
                #expect(try await cluster.send("once", "increment") == json(#"{"count":1}"#))
                _ = try await cluster.json(["stop", "once"])
                try await cluster.waitForLog("machine once ended 2 times within 60 s; it is not restarted again")
                let ended = try await cluster.fsmSend(["once", "increment"])
                #expect(ended.status == 1 && ended.stderr.contains("machine-ended"), "\(ended)")
            }
        }

        static let curve = TopologyFile(
            name: "restart-curve", transport: .tcp,
            workers: [.init(name: "edge")],
            machines: [.init(name: "tally", type: "Counter", worker: "edge", keyed: true)],
            security: """
                { "coordinatorKey": "keys/coordinator.key_secret",
                  "clients": [ { "key": "keys/ops.key", "roles": ["read", "send", "admin"] },
                               { "key": "keys/sender.key", "roles": ["read", "send"] } ] }
                """,
            keyPairs: ["coordinator", "ops", "sender"],
            clientKey: "ops"
        )

        @Test func restartNeedsTheAdminRole() async throws {
            try await withCluster(Self.curve) { cluster in
                #expect(try await cluster.send("tally/a", #"{"add":{"_0":7}}"#) == json(#"{"count":7}"#))
                let refused = try await cluster.fsmSend(["restart", "tally/a"], as: "sender")
                #expect(refused.status == 4, "\(refused)")
                #expect(refused.stderr.contains("a restart needs the admin role on tally/a"), "\(refused)")
                #expect(try await cluster.state("tally/a") == json(#"{"count":7}"#), "the refused restart changed nothing")
                let restarted = try await cluster.fsmSend(["restart", "tally/a"], as: "ops")
                #expect(restarted.status == 0, "\(restarted)")
                #expect(try JSONValue(parsing: Data(restarted.stdout.utf8)) == json(#"{"count":0}"#))
            }
        }
    }
}
