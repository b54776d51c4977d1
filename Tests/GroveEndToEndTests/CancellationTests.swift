import Foundation
import GroveWire
import Testing

extension EndToEnd {
    /// Scenario 24: cancel by id, replace by id, a terminal state and a machine stop each cancel
    /// the effect running on the io worker, and its late result is never delivered. Every io
    /// request takes 1.5 s (`--io-delay-ms`), so each cancellation lands mid-flight. Over tcp.
    @Suite(.timeLimit(.minutes(2)))
    struct CancellationTests {
        static let topology = TopologyFile(
            name: "cancellation", transport: .tcp,
            workers: [.init(name: "edge"), .init(name: "io", arguments: ["--io-delay-ms", "1500"])],
            machines: [.init(name: "loader", type: "DataLoader", worker: "edge", keyed: true),
                       .init(name: "auth", type: "AuthFlow", worker: "edge", keyed: true)],
            io: [("FetchItems", "io"), ("Authenticate", "io"), ("VerifyTwoFactor", "io")]
        )

        @Test func cancelByIDStopsTheRemoteFetch() async throws {
            try await withCluster(Self.topology) { cluster in
                let watcher = try await cluster.watch(["state:loader/", "effect:loader/"])
                #expect(try await cluster.send("loader/a", "load") == loading)
                try await watcher.waitFor("the fetch to start") { $0.isEffect("loader/a", "started", id: "fetch-items") }

                let cancel = try await cluster.fsmSend(["cancel", "loader/a", "fetch-items"])
                #expect(cancel.status == 0, "\(cancel)")
                let cancelled = try await watcher.waitFor("the fetch to be cancelled") { $0.isEffect("loader/a", "cancelled", id: "fetch-items") }
                #expect(cancelled.first?.worker == "io")
                try await cluster.waitForLog("io request cancelled", "machine=loader/a")

                // Cancelling an id that is not running is a no-op.
                let unknown = try await cluster.fsmSend(["cancel", "loader/a", "no-such-effect"])
                #expect(unknown.status == 0, "\(unknown)")

                try await Self.waitOutOneIODelay(cluster, watcher)
                #expect(watcher.effects(of: "loader/a", "completed").isEmpty)
                let states = watcher.states(of: "loader/a")
                #expect(states.last == loading && !states.contains(loadedDemoItems), "a late result changed the state: \(states)")
                #expect(try await cluster.state("loader/a") == loading)
            }
        }

        @Test func replacingAnIDCancelsTheOldFetchAndOnlyTheNewOneDelivers() async throws {
            try await withCluster(Self.topology) { cluster in
                let watcher = try await cluster.watch(["state:loader/", "effect:loader/"])
                try await cluster.send("loader/b", "load")
                try await watcher.waitFor("the first fetch to start") { $0.isEffect("loader/b", "started", id: "fetch-items") }
                #expect(try await cluster.send("loader/b", "reload") == loading)

                try await watcher.waitFor("the first fetch to be cancelled") { $0.isEffect("loader/b", "cancelled", id: "fetch-items") }
                try await cluster.waitForLog("io request cancelled", "machine=loader/b")
                try await watcher.waitFor("the reload's result") { $0.topic == "state:loader/b" && $0.state == loadedDemoItems }

                // The first fetch started earlier with the same delay: had it not been cancelled,
                // its result would be in by now.
                try await Self.waitOutOneIODelay(cluster, watcher)
                #expect(watcher.effects(of: "loader/b", "started").count == 2, "\(watcher.phases(of: "loader/b"))")
                #expect(watcher.effects(of: "loader/b", "cancelled").count == 1, "\(watcher.phases(of: "loader/b"))")
                #expect(watcher.effects(of: "loader/b", "completed").count == 1, "\(watcher.phases(of: "loader/b"))")
                let states = watcher.states(of: "loader/b")
                let loads = states.count(where: isLoaded)
                #expect(loads == 1, "\(states)")
            }
        }

        @Test func aTerminalStateCancelsTheRequestInFlight() async throws {
            try await withCluster(Self.topology) { cluster in
                let watcher = try await cluster.watch(["state:auth/", "effect:auth/", "state:loader/", "effect:loader/"])
                let sent = try await cluster.login("auth/t", email: "ada@example.com", password: "analytical")
                #expect(sent.step == "authenticating")
                try await watcher.waitFor("the sign-in request to start") { $0.isEffect("auth/t", "started", id: "authenticate") }

                // The service's "locked" verdict, sent by hand, ends the run while the request runs.
                let locked = try await cluster.send("auth/t", "accountLocked")
                #expect(locked.step == "locked")
                try await watcher.waitFor("the sign-in request to be cancelled") { $0.isEffect("auth/t", "cancelled", id: "authenticate") }
                try await cluster.waitForLog("io request cancelled", "machine=auth/t")

                try await Self.waitOutOneIODelay(cluster, watcher)
                #expect(watcher.effects(of: "auth/t", "completed").isEmpty)
                #expect(watcher.states(of: "auth/t").last?.step == "locked")
                let refused = try await cluster.fsmSend(["send", "auth/t", "logout"])
                #expect(refused.status == 1, "\(refused)")
                #expect(refused.stderr.contains("machine-ended"), "\(refused)")
            }
        }

        @Test func stoppingTheMachineCancelsItsFetch() async throws {
            try await withCluster(Self.topology) { cluster in
                let watcher = try await cluster.watch(["state:loader/", "effect:loader/"])
                try await cluster.send("loader/d", "load")
                try await watcher.waitFor("the fetch to start") { $0.isEffect("loader/d", "started", id: "fetch-items") }

                #expect(try await cluster.json(["stop", "loader/d"]) == loading)
                try await watcher.waitFor("the fetch to be cancelled") { $0.isEffect("loader/d", "cancelled", id: "fetch-items") }
                try await cluster.waitForLog("io request cancelled", "machine=loader/d")

                try await Self.waitOutOneIODelay(cluster, watcher)
                #expect(watcher.effects(of: "loader/d", "completed").isEmpty)
                let states = watcher.states(of: "loader/d")
                #expect(states.last == loading && !states.contains(loadedDemoItems), "a late result changed the state: \(states)")
                let refused = try await cluster.fsmSend(["send", "loader/d", "reload"])
                #expect(refused.status == 1, "\(refused)")
                #expect(refused.stderr.contains("machine-ended"), "\(refused)")
            }
        }

        /// Runs a fetch of a fresh loader on the same io worker, which takes the same delay, and
        /// waits for its result: anything started before it, cancelled or not, would have
        /// finished by then. This is how the tests wait out "later" without a sleep.
        static func waitOutOneIODelay(_ cluster: Cluster, _ watcher: EventWatcher) async throws {
            let sentinel = "loader/sentinel-\(UUID().uuidString.prefix(6))"
            try await cluster.send(sentinel, "load")
            try await watcher.waitFor("the sentinel fetch to deliver") { $0.topic == "state:" + sentinel && $0.state == loadedDemoItems }
        }
    }
}
