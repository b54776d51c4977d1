import Foundation
import GroveWire
import Testing

extension EndToEnd {
    /// The harness's own failure paths: a waiting helper that could not fail would make every
    /// test that relies on it unable to fail.
    @Suite(.timeLimit(.minutes(2)))
    struct HarnessTests {
        static let topology = TopologyFile(
            name: "harness", transport: .runtimeDirectory,
            workers: [.init(name: "edge"), .init(name: "io")],
            machines: [.init(name: "loader", type: "DataLoader", worker: "edge")],
            io: [("FetchItems", "io")]
        )

        @Test func waitsFailWhenTheAwaitedThingNeverHappens() async throws {
            try await withCluster(Self.topology) { cluster in
                let watcher = try await cluster.watch(["state:loader"])
                let log = await failsWithHarnessError {
                    try await cluster.waitForLog("a line no process ever writes", timeout: .milliseconds(300))
                }
                let event = await failsWithHarnessError {
                    try await watcher.waitFor("an event nobody publishes", timeout: .milliseconds(300)) { $0.topic == "state:nowhere" }
                }
                let state = await failsWithHarnessError {
                    try await cluster.waitForState("loader", "loaded without a load", timeout: .milliseconds(300)) { $0 == loadedDemoItems }
                }
                let condition = await failsWithHarnessError {
                    try await waitUntil("false", timeout: .milliseconds(100)) { false }
                }
                #expect(log)
                #expect(event)
                #expect(state)
                #expect(condition)
                // And they succeed when it does happen.
                try await cluster.send("loader", "load")
                try await watcher.waitFor("the load") { $0.topic == "state:loader" && $0.state == loadedDemoItems }
                try await cluster.waitForState("loader", "loaded") { $0 == loadedDemoItems }
            }
        }

        /// `#expect(throws:)` without a closure inside the macro; see ``EventWatcher/effects(of:_:id:)``.
        func failsWithHarnessError(_ body: () async throws -> Void) async -> Bool {
            do {
                try await body()
                return false
            } catch {
                return error is HarnessError
            }
        }

        @Test func teardownSeesEveryWorkerProcess() async throws {
            try await withCluster(Self.topology) { cluster in
                let listed = Set(try await cluster.list().workers.compactMap(\.pid))
                let children = Set(ProcessTable.children(of: cluster.launch.pid).map(\.pid))
                #expect(listed.count == 2)
                #expect(children == listed, "the orphan check would miss workers")
            }
        }

        /// fsm-launch killed outright cannot stop its workers; they must notice and exit.
        @Test func workersDoNotOutliveAKilledLauncher() async throws {
            try await withCluster(Self.topology) { cluster in
                let workers = ProcessTable.children(of: cluster.launch.pid)
                #expect(workers.count == 2)
                cluster.launch.signal(SIGKILL)
                #expect(await cluster.launch.waitForExit(timeout: .seconds(10)) != nil)
                try await waitUntil("the workers to exit after fsm-launch was killed", timeout: .seconds(10)) {
                    workers.allSatisfy { !ProcessTable.isAlive($0) }
                }
            }
        }
    }
}
