import Foundation
import GroveWire
import Testing

extension EndToEnd {
    /// The topology's io limits with real processes: a `FetchItems` slower than its 300 ms
    /// timeout fails with `timeout` for its machine, and its task is cancelled where it runs,
    /// whether that is another worker or the machine's own; a call beyond
    /// `ioLimits.concurrentPerWorker` fails at once with `busy`. Every io request of the `io`
    /// worker takes 5 s (`--io-delay-ms`), far past the timeout. Over ipc.
    @Suite(.timeLimit(.minutes(2)))
    struct IOLimitTests {
        static let topology = TopologyFile(
            name: "io-limits", transport: .ipc,
            workers: [.init(name: "edge"), .init(name: "io", arguments: ["--io-delay-ms", "5000"])],
            machines: [.init(name: "loader", type: "DataLoader", worker: "edge", keyed: true),
                       .init(name: "near", type: "DataLoader", worker: "io", keyed: true),
                       .init(name: "auth", type: "AuthFlow", worker: "edge", keyed: true)],
            io: [("FetchItems", "io"), ("Authenticate", "io")],
            ioTimeouts: ["FetchItems": 300],
            ioLimits: #"{ "concurrentPerWorker": 1 }"#
        )

        /// The message of a DataLoader's `error` state.
        static func errorMessage(_ state: JSONValue) -> String? {
            state["error"]?["message"]?.stringValue
        }

        @Test func aFetchSlowerThanItsTimeoutFailsWithTimeoutAndIsCancelledOnTheIOWorker() async throws {
            try await withCluster(Self.topology) { cluster in
                let watcher = try await cluster.watch(["state:loader/", "effect:loader/"])
                #expect(try await cluster.send("loader/a", "load") == loading)

                let failed = try await watcher.waitFor("the fetch to fail") { $0.isEffect("loader/a", "failed", id: "fetch-items") }
                #expect(failed.first?.worker == "io")
                let reason = try #require(failed.first?.reason)
                #expect(reason.hasPrefix("timeout: 'FetchItems' ran longer than its timeout of 300 ms on worker io"), "\(reason)")

                // The machine heard the failure: the loader's error state says why.
                let state = try await cluster.waitForState("loader/a", "an error") { Self.errorMessage($0) != nil }
                let message = try #require(Self.errorMessage(state))
                #expect(message.contains("timeout of 300 ms"), "\(message)")
                #expect(state["error"]?["canRetry"] == .bool(true))

                // The worker running it cancelled its task.
                try await cluster.waitForLog("io request cancelled", "machine=loader/a", "worker=io")
                #expect(watcher.effects(of: "loader/a", "completed").isEmpty)
            }
        }

        @Test func aLocalFetchSlowerThanItsTimeoutFailsWithTimeoutAndIsCancelled() async throws {
            try await withCluster(Self.topology) { cluster in
                // `near` lives on the io worker, where FetchItems runs on the worker's own
                // handlers: the worker's core times it out, at the placement's 300 ms.
                #expect(try await cluster.send("near/a", "load") == loading)
                let state = try await cluster.waitForState("near/a", "an error") { Self.errorMessage($0) != nil }
                let message = try #require(Self.errorMessage(state))
                #expect(message.hasPrefix("'FetchItems' ran longer than its timeout of 300 ms on worker io"), "\(message)")
                try await cluster.waitForLog("io request timed out", "machine=near/a", "worker=io")
            }
        }

        @Test func aCallBeyondTheWorkersLimitFailsBusyAtOnce() async throws {
            try await withCluster(Self.topology) { cluster in
                let watcher = try await cluster.watch(["effect:auth/", "effect:loader/"])
                // Authenticate takes the io worker's one place for 5 s (its timeout: the default 30 s).
                try await cluster.login("auth/a", email: "ada@example.com", password: "analytical")
                try await watcher.waitFor("the sign-in request to start") { $0.isEffect("auth/a", "started", id: "authenticate") }

                #expect(try await cluster.send("loader/b", "load") == loading)
                let state = try await cluster.waitForState("loader/b", "an error") { Self.errorMessage($0) != nil }
                let message = try #require(Self.errorMessage(state))
                #expect(message.contains("as ioLimits.concurrentPerWorker allows (1), so 'FetchItems' was not started"), "\(message)")
                // Refused before it started: never sent to the io worker.
                #expect(watcher.effects(of: "loader/b").isEmpty)
                #expect(watcher.effects(of: "auth/a", "failed").isEmpty)
            }
        }
    }
}
