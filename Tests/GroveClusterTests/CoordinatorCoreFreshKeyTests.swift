@testable import GroveCluster
@testable import GroveCoordinator
import GroveWire
import Testing

/// An event to a key never addressed before costs the coordinator a place in the instance
/// book, not a place in the resolved-address cache too: the cache takes a key at its second
/// request. What clients see does not change: where the event goes, what `list` shows,
/// `limits.instancesPerMachine`.
@Suite("CoordinatorCore: fresh keys", .timeLimit(.minutes(2)))
struct CoordinatorCoreFreshKeyTests {
    static func fixture(instancesPerMachine: Int = 100_000) -> CoreFixture {
        var topology = CoreFixture.topology
        topology.limits = .init(instancesPerMachine: instancesPerMachine)
        var fixture = CoreFixture(topology: topology)
        fixture.registerAll()
        return fixture
    }

    static func counter(_ listing: Listing) -> Listing.Machine? { listing.machines.first { $0.name == "counter" } }

    @Test func aKeysFirstEventListsItAndItsSecondCachesIt() throws {
        var fixture = Self.fixture()
        let first = try fixture.sendEvent("A", to: "counter/fresh", correlation: 1)
        #expect(first.worker == fixture.core.topology.placement(ofMachine: "counter", key: "fresh"))
        #expect(fixture.core.keyedInstances["counter"]?.contains("counter/fresh") == true)
        #expect(fixture.core.resolved["counter/fresh"] == nil, "not cached at its first event")
        #expect(Self.counter(fixture.listing())?.instances == ["counter/fresh"])
        let generation = fixture.core.keyedInstances.generation
        let second = try fixture.sendEvent("A", to: "counter/fresh", correlation: 2)
        #expect(second.worker == first.worker)
        #expect(fixture.core.resolved["counter/fresh"]?.listed == true)
        #expect(fixture.core.resolved["counter/fresh"]?.worker == fixture.core.number(of: first.worker))
        #expect(fixture.core.keyedInstances.generation == generation, "listed once")
        _ = try fixture.sendEvent("A", to: "counter/fresh", correlation: 3)
        #expect(Self.counter(fixture.listing())?.instanceCount == 1)
    }

    @Test func freshKeysDoNotEmptyTheCacheOfLiveKeys() throws {
        var fixture = Self.fixture()
        // The cache starts over past its bytes: 150 such fresh keys would have crossed it.
        fixture.core.resolvedBytesLimit = 100_000
        for correlation in 1...2 { _ = try fixture.sendEvent("A", to: "counter/live", correlation: UInt64(correlation)) }
        #expect(fixture.core.resolved["counter/live"]?.listed == true)
        let key = String(repeating: "k", count: 1000)
        for index in 0..<150 { _ = try fixture.sendEvent("A", to: "counter/\(key)\(index)", correlation: UInt64(10 + index)) }
        #expect(fixture.core.resolved["counter/live"]?.listed == true)
        #expect(fixture.core.resolvedBytes < 100)
        #expect(Self.counter(fixture.listing())?.instanceCount == 151)
    }

    @Test func theLimitCountsFreshKeysAsBeforeAndARefusedOneIsRefusedAgain() throws {
        var fixture = Self.fixture(instancesPerMachine: 2)
        let a = try fixture.sendEvent("A", to: "counter/a", correlation: 1)
        _ = try fixture.sendEvent("A", to: "counter/b", correlation: 2)
        for correlation: UInt64 in [3, 4] {
            let refused = fixture.fromClient("A", WireMessage(Header(.event, correlation: correlation), address: "counter/c",
                                                               payload: Array(#"{"go":{}}"#.utf8)))
            let error = try errorReply(in: refused, to: "A", correlation: correlation)
            #expect(error.code == .busy && error.message.contains("has 2 keyed instances"))
        }
        #expect(fixture.core.resolved["counter/c"]?.listed == false, "cached as refused, as before")
        // Keys already listed keep working, at their first event since or their tenth.
        #expect(try fixture.sendEvent("A", to: "counter/a", correlation: 5).worker == a.worker)
        _ = try fixture.sendEvent("A", to: "counter/b", correlation: 6)
        #expect(Set(try #require(Self.counter(fixture.listing())?.instances)) == ["counter/a", "counter/b"])
        // A removed instance frees its place for the refused key.
        fixture.core.forgetInstance("counter/a")
        _ = try fixture.sendEvent("A", to: "counter/c", correlation: 7)
        #expect(Self.counter(fixture.listing())?.instances == ["counter/b", "counter/c"])
    }

    @Test func aGetOfAFreshKeyListsNothing() throws {
        var fixture = Self.fixture()
        let actions = fixture.fromClient("A", WireMessage(Header(.get, correlation: 1), address: "counter/unseen"))
        #expect(actions.first?.sentToWorker != nil)
        #expect(fixture.core.keyedInstances["counter"] == nil)
        #expect(fixture.core.resolved["counter/unseen"]?.listed == false)
        _ = try fixture.sendEvent("A", to: "counter/unseen", correlation: 2)
        #expect(Self.counter(fixture.listing())?.instances == ["counter/unseen"])
    }

    @Test func aLostWorkersFreshKeysAreNoLongerListed() throws {
        var fixture = Self.fixture()
        var placed: [String: [String]] = [:]
        for index in 0..<40 {
            let address = "counter/k\(index)"
            placed[try fixture.sendEvent("A", to: address, correlation: UInt64(index + 1)).worker, default: []].append(address)
        }
        let lost = try #require(placed["data-1"])
        #expect(fixture.core.machines(on: "data-1").filter { $0.hasPrefix("counter/") } == lost.sorted())
        _ = fixture.core.lose("data-1", reason: "test", cause: .exited)
        let listed = Set(try #require(Self.counter(fixture.listing())?.instances))
        #expect(listed == Set(placed["data-2"] ?? []))
    }
}
