import Foundation
@testable import GroveCluster
@testable import GroveCoordinator
import GroveWire
import Testing

/// Found by an attacker's review of issue 34: a client with a `read` key sending `list` in a
/// loop, with 10,000 keyed instances, held the coordinator's loop for 20 s (each `list` walked
/// every instance and encoded the listing) and both workers were declared lost. The listing is
/// built again only when what it shows changed; each further `list` is a copy of its bytes.
@Suite("CoordinatorCore: listing cache", .timeLimit(.minutes(2)))
struct CoordinatorCoreListingCacheTests {
    static func list(_ fixture: inout CoreFixture, correlation: UInt64 = 1) throws -> (payload: [UInt8], listing: Listing) {
        let reply = try #require(fixture.fromClient("A", WireMessage(Header(.list, correlation: correlation))).first?.sentToClient?.message)
        #expect(reply.header.kind == .listing)
        #expect(reply.header.correlation == correlation)
        return (reply.payload, try payload(Listing.self, of: reply))
    }

    /// Whether two arrays share their storage: the second was not built again.
    static func sameStorage(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        a.withUnsafeBufferPointer { a in b.withUnsafeBufferPointer { b in a.baseAddress == b.baseAddress } }
    }

    @Test func aRepeatedListIsTheSameBytesNotBuiltAgain() throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        for index in 0..<3000 { fixture.core.noteInstance("counter/k\(index)") }
        let first = try Self.list(&fixture, correlation: 1)
        let second = try Self.list(&fixture, correlation: 2)
        #expect(Self.sameStorage(first.payload, second.payload))
        #expect(first.payload == (try WireJSON.encode(fixture.listing())))
        #expect(second.listing.machines.first { $0.name == "counter" }?.instanceCount == 3000)
    }

    @Test func aNewInstanceOrARemovedOneShowsAtTheNextList() throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        func counter(_ listing: Listing) -> Listing.Machine? { listing.machines.first { $0.name == "counter" } }
        let before = try Self.list(&fixture)
        #expect(counter(before.listing)?.instanceCount == 0)
        _ = try fixture.sendEvent("A", to: "counter/new", correlation: 5)
        let after = try Self.list(&fixture)
        #expect(counter(after.listing)?.instances == ["counter/new"])
        // An event for an instance already listed changes nothing: the bytes stay.
        _ = try fixture.sendEvent("A", to: "counter/new", correlation: 6)
        #expect(Self.sameStorage(after.payload, try Self.list(&fixture).payload))
        fixture.core.forgetInstance("counter/new")
        #expect(counter(try Self.list(&fixture).listing)?.instanceCount == 0)
    }

    @Test func aWorkerLostOrRegisteredShowsAtTheNextList() throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        func registered(_ listing: Listing) -> [String: Bool] {
            Dictionary(uniqueKeysWithValues: listing.workers.map { ($0.name, $0.registered) })
        }
        #expect(registered(try Self.list(&fixture).listing)["data-1"] == true)
        _ = fixture.core.lose("data-1", reason: "test", cause: .exited)
        #expect(registered(try Self.list(&fixture).listing)["data-1"] == false)
        fixture.register("data-1")
        #expect(registered(try Self.list(&fixture).listing)["data-1"] == true)
    }

    /// A page of one machine's instances is built per request (its `after` differs).
    @Test func aPagedListIsNotTheCachedOne() throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        for index in 0..<5 { fixture.core.noteInstance("counter/k\(index)") }
        _ = try Self.list(&fixture)
        let request = WireMessage(Header(.list, correlation: 3), payload: try WireJSON.encode(ListRequest(machine: "counter", after: "counter/k2")))
        let reply = try #require(fixture.fromClient("A", request).first?.sentToClient?.message)
        #expect(try payload(Listing.self, of: reply).machines.first { $0.name == "counter" }?.instances == ["counter/k3", "counter/k4"])
    }
}
