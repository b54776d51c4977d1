import Foundation
import GroveWire
import Testing

extension EndToEnd {
    /// Issue 21, recovery: io in flight when a durable machine's worker is killed comes back as
    /// its request type declares. `FetchItems` re-issues (the fetch runs again and the loader
    /// ends up loaded), `Authenticate` keeps the default (the sign-in hears `interrupted`).
    /// Over ipc, durability `state`, io slowed down so it is in flight at the kill.
    @Suite(.timeLimit(.minutes(2)))
    struct ReissueTests {
        static let topology = TopologyFile(
            name: "reissue", transport: .ipc,
            workers: [.init(name: "edge"), .init(name: "data-io", arguments: ["--io-delay-ms", "1500"]),
                      .init(name: "auth-io", arguments: ["--io-delay-ms", "1500"])],
            machines: [.init(name: "loader", type: "DataLoader", worker: "edge", durability: "state"),
                       .init(name: "auth", type: "AuthFlow", worker: "edge", durability: "state")],
            io: [("FetchItems", "data-io"), ("Authenticate", "auth-io"), ("VerifyTwoFactor", "auth-io")]
        )

        @Test func killingTheWorkerReissuesTheFetchAndInterruptsTheSignIn() async throws {
            try await withCluster(Self.topology) { cluster in
                let watcher = try await cluster.watch(["effect:loader", "effect:auth"])
                // Each reply leaves once the state it reports, io in flight included, is stored.
                #expect(try await cluster.send("loader", "load") == loading)
                #expect(try await cluster.login("auth", email: "ada@example.com", password: "analytical").step == "authenticating")
                _ = try await watcher.waitFor("the fetch to start on data-io") { $0.isEffect("loader", "started", id: "fetch-items") }

                try await cluster.killAndAwaitRestart("edge", timeout: .seconds(20))

                // The fetch ran again, under its id, and its result loaded the loader.
                try await cluster.waitForState("loader", "loaded by the re-issued fetch", isLoaded)
                #expect(try await cluster.state("loader") == loadedDemoItems)
                let starts = watcher.effects(of: "loader", "started", id: "fetch-items")
                #expect(starts.count == 2, "the fetch started once before the kill and once after: \(starts)")
                #expect(starts.allSatisfy { $0.worker == "data-io" }, "\(starts)")

                // The sign-in was not sent again: the machine heard `interrupted`.
                let auth = try await cluster.waitForState("auth", "told the sign-in was interrupted") { $0.step == "authenticationFailed" }
                #expect(auth["step"] == json(#"""
                    {"authenticationFailed":{"canRetry":false,"email":"ada@example.com","message":"the worker running this machine \#
                    restarted while 'Authenticate' was in flight; it may or may not have run: check before repeating it"}}
                    """#.replacingOccurrences(of: "\n", with: "")))
                #expect(watcher.effects(of: "auth", "started", id: "authenticate").count == 1)
            }
        }
    }
}
