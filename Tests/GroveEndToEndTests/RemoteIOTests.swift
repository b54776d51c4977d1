import Foundation
import GroveWire
import Testing

extension EndToEnd {
    /// Scenario 23: an io effect started by a machine on one worker runs on another, and its
    /// result comes back to the machine as an event. Over ipc.
    @Suite(.timeLimit(.minutes(2)))
    struct RemoteIOTests {
        static let topology = TopologyFile(
            name: "remote-io", transport: .ipc,
            workers: [.init(name: "edge"), .init(name: "data-io", count: 2), .init(name: "auth-io")],
            machines: [.init(name: "loader", type: "DataLoader", worker: "edge"),
                       .init(name: "auth", type: "AuthFlow", worker: "edge")],
            io: [("FetchItems", "data-io"), ("Authenticate", "auth-io"), ("VerifyTwoFactor", "auth-io")]
        )

        @Test func aFetchRunsOnTheIOWorkerAndItsResultReturnsAsAnEvent() async throws {
            try await withCluster(Self.topology) { cluster in
                let watcher = try await cluster.watch(["state:loader", "effect:loader"])
                #expect(try await cluster.send("loader", "load") == loading)

                let loaded = try await watcher.waitFor("loader's loaded state") { $0.topic == "state:loader" && $0.state == loadedDemoItems }
                #expect(loaded.first?.worker == "edge", "the machine stays on its own worker")

                let lifecycle = watcher.effects(of: "loader")
                #expect(lifecycle.map(\.phase) == ["started", "completed"])
                let ids = Set(lifecycle.compactMap(\.effect))
                let requests = Set(lifecycle.compactMap(\.payload["request"]))
                #expect(ids == [.string("fetch-items")])
                #expect(requests == [.string("FetchItems")])
                let runner = try #require(lifecycle.first?.worker)
                #expect(["data-io-1", "data-io-2"].contains(runner), "ran on \(runner), not on the data-io pool")

                // Worker A and worker B are separate processes.
                let listing = try await cluster.list()
                let pids = Dictionary(uniqueKeysWithValues: listing.workers.map { ($0.name, $0.pid) })
                #expect(pids["edge"] != nil && pids[runner] != nil && pids["edge"] != pids[runner])

                #expect(try await cluster.state("loader") == loadedDemoItems)
            }
        }

        @Test func credentialsGoToTheAuthWorkerAndTheVerdictComesBack() async throws {
            try await withCluster(Self.topology) { cluster in
                let watcher = try await cluster.watch(["state:auth", "effect:auth", "output:auth"])
                let sent = try await cluster.login("auth", email: "ada@example.com", password: "analytical")
                #expect(sent.step == "authenticating")

                let signedIn = try await cluster.waitForState("auth", "authenticated") { $0.step == "authenticated" }
                #expect(signedIn["step"] == json(#"{"authenticated":{"_0":{"email":"ada@example.com","id":"u-ada","name":"Ada Lovelace"}}}"#))

                let effects = try await watcher.waitFor("the authenticate effect to complete") { $0.isEffect("auth", "completed", id: "authenticate") }
                #expect(effects.first?.worker == "auth-io")
                #expect(watcher.effects(of: "auth", "started", id: "authenticate").count == 1)

                // The machine's output left the worker too.
                let outputs = try await watcher.waitFor("the signedIn output") { $0.topic == "output:auth" }
                #expect(outputs.first?.payload["output"]?.caseName == "signedIn")
            }
        }
    }
}
