import Foundation
@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
import GroveWire
import Testing

@Suite("CoordinatorCore: listing", .timeLimit(.minutes(2)))
struct CoordinatorCoreListingTests {
    /// An attacker with send on counter* spawned 100,000 instances of 1 KiB keys; the next
    /// `list` built a 100 MB reply and stalled the coordinator for seconds. A listing holds a
    /// page of each machine's instances and their count; `list` with a ListRequest pages on.
    @Test func aListingHoldsAPageOfInstancesAndTheRestArePaged() throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        let all = (0..<2500).map { String(format: "counter/k%05d", $0) }
        for address in all.shuffled() { fixture.core.noteInstance(address) }
        let first = try #require(fixture.listing().machines.first { $0.name == "counter" })
        #expect(first.instanceCount == 2500)
        #expect(first.instances == Array(all.prefix(ListRequest.pageSize)))
        var paged: [String] = []
        var after: String?
        repeat {
            let message = WireMessage(Header(.list, correlation: 9), payload: try WireJSON.encode(ListRequest(machine: "counter", after: after)))
            let reply = try #require(fixture.fromClient("A", message).first?.sentToClient?.message)
            let listing = try payload(Listing.self, of: reply)
            let counter = try #require(listing.machines.first { $0.name == "counter" })
            let others = listing.machines.filter { $0.name != "counter" }
            #expect(others.allSatisfy { $0.instances.isEmpty })
            paged += counter.instances
            after = counter.instances.count == ListRequest.pageSize ? counter.instances.last : nil
        } while after != nil
        #expect(paged == all)
        let bad = WireMessage(Header(.list, correlation: 10), payload: Array(#"{"after":1}"#.utf8))
        #expect(try errorReply(in: fixture.fromClient("A", bad), to: "A", correlation: 10).code == .malformedJSON)
    }

    /// Pages come in byte order, which `AddressOrder` compares with `memcmp`: the same order as
    /// the UTF-8 views', for keys of every length and script, and the pages of a listing whose
    /// first page is kept with a cutoff hold exactly the sorted addresses.
    @Test func pagesAreInByteOrderForKeysOfAnyScript() throws {
        let pieces = ["a", "b", "z", "0", "é", "e\u{301}", "ß", "日本", "🙂", "A", "-", "~"]
        var generator = SystemRandomNumberGenerator()
        let keys = (0..<1500).map { _ in
            (0..<Int.random(in: 1...4, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }.joined()
        }
        for (a, b) in zip(keys, keys.shuffled()) {
            #expect(AddressOrder.precedes(a, b) == a.utf8.lexicographicallyPrecedes(b.utf8), "\(a) \(b)")
        }
        var fixture = CoreFixture()
        fixture.registerAll()
        let all = Set(keys.map { "counter/" + $0 })
        for address in all { fixture.core.noteInstance(address) }
        let sorted = all.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        let first = try #require(fixture.listing().machines.first { $0.name == "counter" })
        #expect(first.instances == Array(sorted.prefix(ListRequest.pageSize)))
        let second = try #require(fixture.core.listing(page: ListRequest(machine: "counter", after: first.instances.last)).machines
            .first { $0.name == "counter" })
        #expect(second.instances == Array(sorted.dropFirst(ListRequest.pageSize).prefix(ListRequest.pageSize)))
    }

    @Test func readsDoNotListAKeyedInstanceOnlyEventsDo() throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        func instances() -> [String] { fixture.listing().machines.first { $0.name == "counter" }?.instances ?? [] }
        for kind in [MessageKind.get, .stop, .restart, .cancel] {
            let actions = fixture.fromClient("A", WireMessage(Header(kind, correlation: 1), address: "counter/never", payload: Array("1".utf8)))
            #expect(actions.first?.sentToWorker != nil)
        }
        #expect(instances().isEmpty)
        _ = try fixture.sendEvent("A", to: "counter/never", correlation: 2)
        #expect(instances() == ["counter/never"])
    }

    /// A worker that is lost takes its keyed instances with it (it starts without any when it
    /// registers again): the listing and its registered event no longer name them, while the
    /// instances on the other worker of the pool stay listed.
    @Test func aLostWorkersKeyedInstancesAreNoLongerListed() throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        var placed: [String: [String]] = [:]
        for index in 0..<20 {
            let address = "counter/k\(index)"
            placed[try fixture.sendEvent("A", to: address, correlation: UInt64(index + 1)).worker, default: []].append(address)
        }
        let lost = try #require(placed["data-1"]), kept = try #require(placed["data-2"])
        func instances() -> Set<String> { Set(fixture.listing().machines.first { $0.name == "counter" }?.instances ?? []) }
        #expect(instances() == Set(lost + kept))

        let lostEvent = try #require(fixture.core.lose("data-1", reason: "test", cause: .exited).compactMap(\.published).first { $0.topic == "worker:data-1" })
        #expect(Set(try payload(WorkerEvent.self, of: lostEvent.message).machines) == Set(lost + ["sink"]))
        #expect(instances() == Set(kept))

        let registered = try #require(fixture.register("data-1").compactMap(\.published).first { $0.topic == "worker:data-1" })
        #expect(try payload(WorkerEvent.self, of: registered.message).machines == ["sink"])
        // An event spawns the instance again, and it is listed again.
        _ = try fixture.sendEvent("A", to: lost[0], correlation: 100)
        #expect(instances() == Set(kept + [lost[0]]))
    }

    @Test func listDescribesMachinesWorkersAndInstances() throws {
        var fixture = CoreFixture()
        fixture.register("edge", "data-2")
        _ = try fixture.sendEvent("A", to: "poller/eu-1", correlation: 1)
        _ = try fixture.sendEvent("A", to: "poller/us-2", correlation: 2)

        let actions = fixture.fromClient("B", WireMessage(Header(.list, correlation: 55)))
        try #require(actions.count == 1)
        let reply = try #require(actions[0].sentToClient)
        #expect(reply.client == "B")
        #expect(reply.message.header.kind == .listing)
        #expect(reply.message.header.correlation == 55)
        let listing = try payload(Listing.self, of: reply.message)
        #expect(listing.topology == "unit")
        #expect(listing.events == "inproc://events")
        #expect(listing.workers == [
            .init(name: "edge", group: "edge", registered: true, pid: 101),
            .init(name: "data-1", group: "data", registered: false, pid: nil),
            .init(name: "data-2", group: "data", registered: true, pid: 202),
        ])
        let machines = Dictionary(uniqueKeysWithValues: listing.machines.map { ($0.name, $0) })
        #expect(listing.machines.map(\.name) == ["auth", "loader", "poller", "counter", "sink"])
        #expect(machines["auth"] == .init(name: "auth", type: "AuthFlow", keyed: false, worker: "edge", instances: [], available: true))
        #expect(machines["poller"]?.instances == ["poller/eu-1", "poller/us-2"])
        #expect(machines["counter"]?.worker == "data")
        #expect(machines["sink"]?.worker == "data-1")
    }

    /// `sink` is a single machine placed on `data-1`; with only `data-2` up, requests to it are
    /// refused as unavailable, so the listing must not call it available.
    @Test func listingAvailabilityAgreesWithRouting() throws {
        var fixture = CoreFixture()
        fixture.register("edge", "data-2")
        let refused = fixture.fromClient("A", WireMessage(Header(.get, correlation: 1), address: "sink"))
        #expect(try errorReply(in: refused, to: "A", correlation: 1).code == .unavailable)

        let listing = fixture.listing()
        let sink = try #require(listing.machines.first { $0.name == "sink" })
        #expect(sink.available == false)
        #expect(listing.machines.first { $0.name == "auth" }?.available == true)
    }
}
