import Foundation
import GroveWire
import Testing

extension EndToEnd {
    /// Issue 36's new example on a worker: `BufferedConnection`, as the shipped `fsm-worker`
    /// registers it, durable, with real fsm-launch, fsm-worker and fsm-send over ipc. Sends while
    /// it dials are postponed; the worker is killed with SIGKILL while it holds them; once the
    /// link is up they go out in the order they came. Its timeouts (5 s to dial, 1 s between
    /// tries) may fire while the test runs on a slow machine: the test then dials again, which
    /// the postponed sends wait through too, so no timing decides the verdict.
    @Suite(.timeLimit(.minutes(2)))
    struct BufferedConnectionWorkerTests {
        static func topology(_ name: String, durability: String) -> TopologyFile {
            TopologyFile(
                name: name, transport: .ipc,
                workers: [.init(name: "w")],
                machines: [.init(name: "link", type: "BufferedConnection", worker: "w", durability: durability)]
            )
        }

        static let texts = ["one", "two", "three"]

        @Test(arguments: ["state", "journal"])
        func sendsWhileConnectingSurviveAKilledWorkerAndGoOutInOrderOnceOnline(durability: String) async throws {
            try await withCluster(Self.topology("buffered-\(durability)", durability: durability)) { cluster in
                let connecting = try await cluster.send("link", "connect")
                #expect(connecting == json(#"{"connecting":{"attempt":1}}"#), "\(connecting)")
                for text in Self.texts {
                    let reply = try await cluster.send("link", #"{"send":{"_0":"\#(text)"}}"#)
                    // Not online (no linkUp yet), so the send is kept, whatever timeout fired.
                    #expect(reply["online"] == nil, "\(text) is postponed while not online: \(reply)")
                }
                try await cluster.killAndAwaitRestart("w", timeout: .seconds(20))

                let restored = try await cluster.state("link")
                #expect(restored["online"] == nil, "restored before the link came up: \(restored)")
                let online = try await Self.driveOnline(cluster)
                #expect(online["online"]?["sent"] == json(#"["one","two","three"]"#), "in the order they came: \(online)")
            }
        }

        /// Brings the link up and waits until the postponed sends went out: `linkUp` while it
        /// dials, `connect` again if it gave up (offline), nothing while it backs off (its retry
        /// timer dials again).
        static func driveOnline(_ cluster: Cluster) async throws -> JSONValue {
            var last: JSONValue?
            do {
                return try await eventually("link online with every send", timeout: .seconds(60), interval: .milliseconds(50)) {
                    let state = try await cluster.state("link")
                    last = state
                    if let sent = state["online"]?["sent"]?.arrayValue, sent.count >= Self.texts.count { return state }
                    if state["connecting"] != nil {
                        _ = try await cluster.fsmSend(["send", "link", "linkUp"])
                    } else if state["offline"] != nil {
                        _ = try await cluster.fsmSend(["send", "link", "connect"])
                    }
                    return nil
                }
            } catch let error as HarnessError {
                throw HarnessError("\(error); last state: \(last.map { "\($0)" } ?? "none")")
            }
        }
    }
}
