import Foundation
import GroveWire
import Testing

extension EndToEnd {
    /// Scenario 27: a DataLoader fetches through a remote effect; retry after a failure works;
    /// reload while loading replaces the fetch in flight. Over ipc.
    @Suite(.timeLimit(.minutes(2)))
    struct LoadingTests {
        @Test func retryAfterAFailedFetchLoads() async throws {
            // The fetcher is an external worker the test starts and kills itself; the
            // coordinator notices its death by the missing heartbeats.
            let topology = TopologyFile(
                name: "loading-retry", transport: .ipc,
                workers: [.init(name: "edge"), .init(name: "fetcher", external: true)],
                machines: [.init(name: "loader", type: "DataLoader", worker: "edge", keyed: true)],
                io: [("FetchItems", "fetcher")],
                heartbeat: (intervalMs: 100, timeoutMs: 1000)
            )
            try await withCluster(topology) { cluster in
                let watcher = try await cluster.watch(["state:loader/", "effect:loader/", "worker:"])
                try await cluster.send("loader/r", "load")
                try await watcher.waitFor("the first load") { $0.topic == "state:loader/r" && $0.state == loadedDemoItems }

                // The only worker that can fetch goes away.
                let fetcher = try #require(cluster.externalWorker("fetcher"))
                fetcher.signal(SIGKILL)
                try await watcher.waitFor("the fetcher to be declared lost") { $0.isWorker("fetcher", "lost") }

                #expect(try await cluster.send("loader/r", "reload") == loading)
                let failed = try await cluster.waitForState("loader/r", "a failed load") { $0.caseName == "error" }
                #expect(failed["error"]?["canRetry"] == .bool(true), "a missing worker is worth a retry: \(failed)")
                #expect(failed["error"]?["message"]?.stringValue?.isEmpty == false)
                #expect(watcher.effects(of: "loader/r", "started").count == 1, "the failed fetch never ran")

                // Once a fetcher is back, retry loads.
                _ = try await cluster.startExternalWorker("fetcher")
                try await watcher.waitFor("the fetcher to register again") { $0.isWorker("fetcher", "registered") }
                #expect(try await cluster.send("loader/r", "retry") == loading)
                try await cluster.waitForState("loader/r", "loaded again") { $0 == loadedDemoItems }
                #expect(watcher.effects(of: "loader/r", "completed").count == 2)
            }
        }

        @Test func reloadWhileLoadingReplacesTheFetch() async throws {
            let topology = TopologyFile(
                name: "loading-reload", transport: .ipc,
                workers: [.init(name: "edge"), .init(name: "data-io", arguments: ["--io-delay-ms", "1000"])],
                machines: [.init(name: "loader", type: "DataLoader", worker: "edge")],
                io: [("FetchItems", "data-io")]
            )
            try await withCluster(topology) { cluster in
                let watcher = try await cluster.watch(["state:loader", "effect:loader"])
                #expect(try await cluster.send("loader", "load") == loading)
                try await watcher.waitFor("the first load") { $0.topic == "state:loader" && $0.state == loadedDemoItems }

                // Reload from loaded, then reload again while that fetch is in flight.
                #expect(try await cluster.send("loader", "reload") == loading)
                try await watcher.waitFor("the reload's fetch to start", count: 2) { $0.isEffect("loader", "started") }
                #expect(try await cluster.send("loader", "reload") == loading)
                try await watcher.waitFor("the replaced fetch to be cancelled") { $0.isEffect("loader", "cancelled", id: "fetch-items") }
                try await cluster.waitForLog("io request cancelled", "machine=loader")
                try await watcher.waitFor("the second reload's result", count: 2) { $0.topic == "state:loader" && $0.state == loadedDemoItems }

                // `cancelled` is published once the io worker says the replaced fetch's task
                // ended, so it may come before or after the third fetch's `started`.
                let phases = watcher.phases(of: "loader")
                #expect(Array(phases.prefix(3)) == ["started", "completed", "started"], "\(phases)")
                #expect(phases.dropFirst(3).sorted() == ["cancelled", "completed", "started"], "\(phases)")
                #expect(try await cluster.state("loader") == loadedDemoItems)
            }
        }
    }
}
