import Foundation
import Testing

extension EndToEnd {
    /// Seed 004's `MyFeature` and `ErrorHandlingFeature`, as GroveTCA reducers, on a worker of
    /// their own: `SeedTCASMWorker` (Tests/Fixtures/SeedTCASMWorker), a real process fsm-launch
    /// starts from the topology's `executable`, driven with fsm-send; durable ones come back
    /// after a kill -9 of that worker.
    @Suite(.timeLimit(.minutes(2)))
    struct SeedTCASMWorkerTests {
        static let topology = TopologyFile(
            name: "seed-tcasm", transport: .runtimeDirectory,
            workers: [.init(name: "main"), .init(name: "tcasm", executable: "SeedTCASMWorker")],
            machines: [.init(name: "my", type: "MyFeature", worker: "tcasm", keyed: true),
                       .init(name: "errors", type: "ErrorHandlingFeature", worker: "tcasm", keyed: true),
                       .init(name: "my-state", type: "MyFeature", worker: "tcasm", keyed: true, durability: "state"),
                       .init(name: "errors-journal", type: "ErrorHandlingFeature", worker: "tcasm", keyed: true,
                             durability: "journal")]
        )

        @Test func myFeatureLoadsWithTheDependencyTheWorkerSet() async throws {
            try await withCluster(Self.topology) { cluster in
                #expect(try await cluster.send("my/a", #"{"input":{"_0":{"load":{}}}}"#) == json(#"{"loading":{}}"#))
                // The service reads @Dependency(\.locationManager), set with withDependencies
                // where the worker registered the feature.
                try await cluster.waitForState("my/a", "loaded") { $0 == json(#"{"loaded":{"_0":"data near 52.5,13.4"}}"#) }
            }
        }

        @Test func errorHandlingFeatureKeepsRunningThroughErrors() async throws {
            try await withCluster(Self.topology) { cluster in
                // The first fetch fails offline: a result, not a stop.
                #expect(try await cluster.send("errors/a", #"{"input":{"_0":{"load":{}}}}"#) == json(#"{"loading":{}}"#))
                try await cluster.waitForState("errors/a", "loadFailed") { $0 == json(#"{"loadFailed":{"_0":{"offline":{}}}}"#) }
                // Still running: the next load succeeds, and the save's disk-full error is a state.
                try await cluster.send("errors/a", #"{"input":{"_0":{"load":{}}}}"#)
                let ada = Data("ada".utf8).base64EncodedString()
                try await cluster.waitForState("errors/a", "loaded") { $0 == json(#"{"loaded":{"_0":"\#(ada)"}}"#) }
                try await cluster.send("errors/a", #"{"input":{"_0":{"save":{}}}}"#)
                try await cluster.waitForState("errors/a", "saveFailed") {
                    $0 == json(#"{"saveFailed":{"_0":"\#(ada)","_1":{"diskFull":{}}}}"#)
                }
            }
        }

        @Test func durableFeaturesComeBackAfterTheirWorkersKill() async throws {
            try await withCluster(Self.topology) { cluster in
                let located = json(#"{"loaded":{"_0":"data near 52.5,13.4"}}"#)
                try await cluster.send("my-state/a", #"{"input":{"_0":{"load":{}}}}"#)
                try await cluster.waitForState("my-state/a", "loaded") { $0 == located }
                // The journal holds the failed load's result, a Result that crossed as JSON.
                try await cluster.send("errors-journal/a", #"{"input":{"_0":{"load":{}}}}"#)
                try await cluster.waitForState("errors-journal/a", "loadFailed") { $0.caseName == "loadFailed" }
                try await cluster.send("errors-journal/a", #"{"input":{"_0":{"load":{}}}}"#)
                let ada = Data("ada".utf8).base64EncodedString()
                let loaded = json(#"{"loaded":{"_0":"\#(ada)"}}"#)
                try await cluster.waitForState("errors-journal/a", "loaded") { $0 == loaded }

                try await cluster.killAndAwaitRestart("tcasm", timeout: .seconds(20))
                #expect(try await cluster.state("my-state/a") == located)
                #expect(try await cluster.state("errors-journal/a") == loaded)
                // And they run on, with the new process's reducers.
                try await cluster.send("errors-journal/a", #"{"input":{"_0":{"save":{}}}}"#)
                try await cluster.waitForState("errors-journal/a", "saveFailed") {
                    $0 == json(#"{"saveFailed":{"_0":"\#(ada)","_1":{"diskFull":{}}}}"#)
                }
                #expect(try await cluster.send("my-state/a", #"{"input":{"_0":{"load":{}}}}"#) == json(#"{"loading":{}}"#))
                try await cluster.waitForState("my-state/a", "loaded again") { $0 == located }
            }
        }
    }
}
