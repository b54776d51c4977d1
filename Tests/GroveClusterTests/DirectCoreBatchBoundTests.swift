import Foundation
@testable import GroveCluster
@testable import GroveCoordinator
@testable import GroveWorker
@_spi(GroveInternal) import GroveWire
import Testing

/// `limits.batchEnvelopes` on a worker's direct socket (h31: one batch of 700,000 `get`s held
/// a worker's loop for 1 s, its heartbeat timeout 1.5 s): carried in the welcome's `direct`
/// part, checked from a batch's header before any envelope is read, refused whole with the
/// coordinator's words; the default before a welcome and from a coordinator that predates it.
@Suite("DirectCore: the batch bound", .timeLimit(.minutes(2)))
struct DirectCoreBatchBoundTests {
    static func welcome(batchEnvelopes: Int?) -> Welcome {
        var welcome = DirectCoreTests.welcome()
        welcome.direct?.limits.batchEnvelopes = batchEnvelopes
        return welcome
    }

    @Test func aBatchPastTheWelcomesBoundIsRefusedWholeWithTheCoordinatorsWords() throws {
        var core = DirectCore(worker: "data-1")
        core.welcomed(Self.welcome(batchEnvelopes: 5))
        #expect(core.batchRefusal(count: 1) == nil && core.batchRefusal(count: 5) == nil)
        let refused = try #require(core.batchRefusal(count: 6))
        #expect(refused.code == .oversized)
        #expect(refused.correlation == nil, "a whole batch is refused under correlation 0")
        #expect(refused.message.contains("counts 6 envelopes") && refused.message.contains("worker data-1 accepts at most 5")
                && refused.message.contains("limits.batchEnvelopes") && refused.message.contains("split it into batches of at most 5"),
                "\(refused.message)")
        let coordinators = try #require(BatchBound.refusal(count: 6, limit: 5))
        #expect(refused.message == coordinators.message.replacingOccurrences(of: "the coordinator", with: "worker data-1"))
        // The largest count a header can say is refused as plainly.
        #expect(core.batchRefusal(count: .max)?.message.contains("counts \(UInt64.max) envelopes") == true)
    }

    /// Before a welcome (every request is then `moved` anyway) and from an older coordinator
    /// whose welcome has no `batchEnvelopes`: the default, so a batch is never unbounded.
    @Test func withoutTheWelcomesNumberTheDefaultHolds() throws {
        let limit = Topology.Limits().batchEnvelopes
        let fresh = DirectCore(worker: "data-1")
        #expect(fresh.batchRefusal(count: UInt64(limit)) == nil)
        #expect(fresh.batchRefusal(count: UInt64(limit + 1))?.code == .oversized)

        // An older coordinator's welcome: its `direct` part's limits without the key.
        let encoded = try WireJSON.encode(Self.welcome(batchEnvelopes: nil))
        #expect(!String(decoding: encoded, as: UTF8.self).contains("batchEnvelopes"))
        var older = DirectCore(worker: "data-1")
        older.welcomed(try WireJSON.decode(Welcome.self, from: encoded))
        #expect(older.settings?.limits.batchEnvelopes == nil)
        #expect(older.batchRefusal(count: UInt64(limit)) == nil)
        #expect(older.batchRefusal(count: UInt64(limit + 1))?.message.contains("at most \(limit)") == true)
    }

    /// The coordinator puts the topology's bound in the welcome of a worker that serves direct
    /// routes, and it survives the wire.
    @Test func theCoordinatorCarriesTheTopologysBoundToDirectWorkers() throws {
        var topology = CoreFixture.topology
        topology.workers = topology.workers.map { group in
            var group = group
            group.direct = group.name == "data"
            return group
        }
        topology.limits.batchEnvelopes = 42
        let core = CoordinatorCore(topology: topology, eventsEndpoint: "inproc://events")
        let settings = try #require(core.directSettings(forGroup: "data", registered: "ipc:///run/direct/data-1"))
        #expect(settings.limits.batchEnvelopes == 42)
        let decoded = try WireJSON.decode(DirectSettings.self, from: try WireJSON.encode(settings))
        var worker = DirectCore(worker: "data-1")
        var welcome = DirectCoreTests.welcome()
        welcome.direct = decoded
        worker.welcomed(welcome)
        #expect(worker.batchRefusal(count: 42) == nil)
        #expect(worker.batchRefusal(count: 43)?.message.contains("at most 42") == true)
    }
}
