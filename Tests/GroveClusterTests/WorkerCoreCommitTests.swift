@testable import GroveCluster
@testable import GroveWorker
@_spi(GroveInternal) import GroveWire
import Testing

/// How a worker's commits are made comes from the last welcome, with the topology's defaults
/// before one: no thread, no store, no clock.
@Suite(.timeLimit(.minutes(2)))
struct WorkerCoreCommitTests {
    let start = ContinuousClock.now

    @Test func beforeAWelcomeTheTopologysDefaultsHold() {
        let core = WorkerCore(worker: "edge", coordinator: "ipc:///run/test/workers", machineTypes: [], now: start)
        #expect(core.snapshotEvery == Topology.DurabilitySettings().snapshotEvery)
        #expect(core.commitFlush == StoreFlush(Topology.DurabilitySettings().flush))
    }

    @Test func theWelcomesDurabilitySettingsAreTheCommits() throws {
        var core = WorkerCore(worker: "edge", coordinator: "ipc:///run/test/workers", machineTypes: [], now: start)
        let welcome = Welcome(machines: [], remoteIO: [], heartbeatIntervalMs: 50, heartbeatTimeoutMs: 200, mailboxCapacity: 100,
                              snapshotEvery: 7, flush: .disk)
        _ = core.welcome(try WireJSON.encode(welcome), now: start)
        #expect(core.snapshotEvery == 7)
        #expect(core.commitFlush == StoreFlush(.disk))
    }
}
