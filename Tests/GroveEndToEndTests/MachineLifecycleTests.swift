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
                #expect(after.stderr.contains("until its worker restarts"), "says the address stays ended: \(after.stderr)")
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
