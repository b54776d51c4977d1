import Foundation
@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
@_spi(GroveInternal) import GroveWire
import Testing

/// What a watcher that does not read may cost the coordinator, in bytes: a publication carries
/// at most `limits.publicationBytes` (past it, a `publication-too-large` error under the same
/// topic and number), and the events socket holds as many as fit in `queues.watcherOutboxBytes`.
@Suite("Publications: bounded in bytes", .timeLimit(.minutes(2)))
struct PublicationSizeTests {
    static func change(_ address: String, bytes: Int, worker: String = "main") -> WireMessage {
        let filler = String(repeating: "x", count: bytes)
        return WireMessage(Header(.stateChanged), address: address,
                           payload: Array(#"{"address":"\#(address)","worker":"\#(worker)","state":{"title":"\#(filler)"}}"#.utf8))
    }

    static func number(of message: WireMessage) -> UInt64? {
        PublicationSequence(correlation: message.header.correlation)?.number
    }

    static func notice(_ message: WireMessage) throws -> [String: JSONValue] {
        try #require(try JSONValue(parsing: Data(message.payload)).objectValue)
    }

    @Test func aPublicationOverTheLimitIsToldByItsSizeUnderItsNumber() throws {
        var log = PublicationLog(epoch: CorrelationEpoch(5), maximumPublicationBytes: 1000)
        let small = log.numbered(Self.change("nav/a", bytes: 10), topic: "state:nav/a")
        let big = Self.change("nav/a", bytes: 900_000)
        let told = log.numbered(big, topic: "state:nav/a")
        let after = log.numbered(Self.change("nav/a", bytes: 20), topic: "state:nav/a")

        #expect(small.header.kind == .stateChanged && after.header.kind == .stateChanged)
        // No gap a watcher could not see: the notice takes the big state's number.
        #expect([small, told, after].map(Self.number(of:)) == [1, 2, 3])
        #expect(told.header.kind == .error)
        #expect(told.address == "nav/a")
        #expect(told.payload.count < 1000, "the notice is small: \(told.payload.count) bytes")
        let fields = try Self.notice(told)
        #expect(fields["code"] == .string("publication-too-large"))
        #expect(fields["kind"] == .string("state-changed"))
        #expect(fields["bytes"] == .integer(Int64(big.payload.count)))
        #expect(fields["limit"] == .integer(1000))
        let text = try #require(fields["message"]?.stringValue)
        #expect(text.contains("limits.publicationBytes") && text.contains("get"), "\(text)")
        // Decodes as the protocol's error, as a route's failure on the events stream does.
        #expect(try WireJSON.decode(WireError.self, from: told.payload).code == .publicationTooLarge)
    }

    @Test func anyKindOfPublicationIsBoundedNotOnlyStates() throws {
        var log = PublicationLog(epoch: CorrelationEpoch(5), maximumPublicationBytes: 100)
        let payload = Array(#"{"output":"\#(String(repeating: "o", count: 500))"}"#.utf8)
        let output = log.numbered(WireMessage(Header(.output), address: "nav/a", payload: payload), topic: "output:nav/a")
        #expect(output.header.kind == .error)
        #expect(try Self.notice(output)["kind"] == .string("output"))
        // At the limit is not over it.
        let fits = WireMessage(Header(.worker), address: "main", payload: Array(repeating: UInt8(ascii: " "), count: 100))
        #expect(log.numbered(fits, topic: "worker:main").payload == fits.payload)
    }

    @Test func aStateTooLargeToPublishIsOmittedFromSnapshotsNotGivenStale() throws {
        var log = PublicationLog(epoch: CorrelationEpoch(5), maximumPublicationBytes: 1000)
        _ = log.numbered(Self.change("nav/a", bytes: 10), topic: "state:nav/a")
        _ = log.numbered(Self.change("nav/a", bytes: 5000), topic: "state:nav/a")
        var snapshot = try WireJSON.decode(StateSnapshot.self, from: log.snapshot(prefixes: []))
        // The older state under the newer number would be a state the machine no longer has.
        #expect(snapshot.states.isEmpty)
        #expect(snapshot.omitted == ["state:nav/a"])
        #expect(log.stateBytes == 0)

        _ = log.numbered(Self.change("nav/a", bytes: 30), topic: "state:nav/a")
        snapshot = try WireJSON.decode(StateSnapshot.self, from: log.snapshot(prefixes: []))
        #expect(snapshot.states.map(\.sequence) == [3])
        #expect(snapshot.omitted.isEmpty)
    }

    @Test func theCoordinatorPublishesWithinTheTopologysLimit() throws {
        var topology = InMemoryCluster.topology
        topology.limits.publicationBytes = 2048
        let cluster = InMemoryCluster(topology: topology)
        cluster.registerAll()
        cluster.fromWorker("edge", Self.change("auth", bytes: 100_000, worker: "edge"))
        cluster.fromWorker("edge", Self.change("auth", bytes: 100, worker: "edge"))
        let published = cluster.published().filter { $0.topic == "state:auth" }
        try #require(published.map(\.message.header.kind) == [.error, .stateChanged])
        #expect(published.map { Self.number(of: $0.message) } == [1, 2])
        #expect(try Self.notice(published[0].message)["limit"] == .integer(2048))
    }

    // MARK: The events socket's queue, in bytes

    @Test func byDefaultAWatcherThatDoesNotReadCostsAtMost64MiB() {
        let topology = InMemoryCluster.topology
        #expect(Topology.Queues().watcherOutboxBytes == 64 << 20)
        #expect(topology.publicationFootprint == 1032 + 12 + 1024 + 65536 + 512)
        #expect(topology.watcherQueueMessages == 985)
        #expect(topology.watcherQueueMessages * topology.publicationFootprint <= 64 << 20)
    }

    @Test func theQueueHoldsWhicheverIsFewerOfCountAndBytes() {
        var topology = InMemoryCluster.topology
        topology.queues.watcherOutbox = 10
        #expect(topology.watcherQueueMessages == 10, "watcherOutbox is fewer")
        topology.queues.watcherOutbox = 100_000
        topology.limits.publicationBytes = 512
        topology.limits.addressBytes = 64
        // Each publication: the topic (8 + 64), the header, the address, the notice that may
        // stand for a larger one (512 + 6 * 64), ZeroMQ's parts.
        #expect(topology.publicationFootprint == 72 + 12 + 64 + 896 + 512)
        #expect(topology.watcherQueueMessages == (64 << 20) / 1556)
        topology.queues.watcherOutboxBytes = 100
        #expect(topology.watcherQueueMessages == 1, "never 0, which ZeroMQ reads as no bound")
    }

    @Test func theTopologySetsBothAndCheckSaysWhatAWatcherIsHeld() throws {
        let json = TopologyLimitsTests.document(#"""
            "queues": { "watcherOutboxBytes": 1048576 }, "limits": { "publicationBytes": 4096 }
            """#)
        let topology = try Topology(json: Data(json.utf8), source: "t.json")
        #expect(topology.queues.watcherOutboxBytes == 1 << 20)
        #expect(topology.limits.publicationBytes == 4096)
        let held = (1 << 20) / (1032 + 12 + 1024 + 6656 + 512)
        #expect(topology.watcherQueueMessages == held)
        #expect(topology.queuesSummary.contains("watcherOutboxBytes 1048576 (a watcher that does not read is held \(held) publications)"))
        let bad = TopologyLimitsTests.issues(TopologyLimitsTests.document(#""queues": { "watcherOutboxBytes": 0 }"#))
        #expect(bad.count == 1 && bad[0].contains("$.queues.watcherOutboxBytes"), "\(bad)")
    }
}
