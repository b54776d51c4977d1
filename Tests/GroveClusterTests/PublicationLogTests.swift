@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
@_spi(GroveInternal) import GroveWire
import Testing
import ZeroMQ

/// The coordinator's numbering of publications and the states it keeps for snapshots: the
/// pure log, then through the real driver on an `EmbeddedLoop`.
@Suite("PublicationLog: numbers and snapshots", .timeLimit(.minutes(2)))
struct PublicationLogTests {
    static func change(_ address: String, _ count: Int, worker: String = "data-1") -> WireMessage {
        WireMessage(Header(.stateChanged), address: address,
                    payload: Array(#"{"address":"\#(address)","worker":"\#(worker)","state":{"count":\#(count)}}"#.utf8))
    }

    static func sequence(of message: WireMessage) -> PublicationSequence? {
        PublicationSequence(correlation: message.header.correlation)
    }

    static func snapshot(_ log: PublicationLog, _ prefixes: [String]) throws -> StateSnapshot {
        try WireJSON.decode(StateSnapshot.self, from: log.snapshot(prefixes: prefixes))
    }

    @Test func eachTopicIsNumberedFromOneInTheLogsEpoch() {
        var log = PublicationLog(epoch: CorrelationEpoch(5))
        let numbers = ["state:a", "state:b", "state:a", "worker:edge", "state:a"].map {
            Self.sequence(of: log.numbered(Self.change("a", 0), topic: $0))
        }
        #expect(numbers == [1, 1, 2, 1, 3].map { Optional(PublicationSequence(epoch: 5, number: $0)) })
    }

    @Test func aSnapshotHoldsTheLastStateOfEachCoveredTopicAtItsNumber() throws {
        var log = PublicationLog(epoch: CorrelationEpoch(5))
        for count in 0..<3 { _ = log.numbered(Self.change("counter/x", count), topic: "state:counter/x") }
        _ = log.numbered(Self.change("counter/y", 7), topic: "state:counter/y")
        _ = log.numbered(Self.change("auth", 1), topic: "state:auth")
        // Not states: numbered, never in a snapshot.
        _ = log.numbered(WireMessage(Header(.effect), address: "counter/x", payload: Array("{}".utf8)), topic: "effect:counter/x")
        _ = log.numbered(WireMessage(Header(.machine), address: "counter/x", payload: Array("{}".utf8)), topic: "machine:counter/x")

        let snapshot = try Self.snapshot(log, ["state:counter/", "effect:"])
        #expect(snapshot.epoch == 5)
        #expect(snapshot.states.map(\.topic) == ["state:counter/x", "state:counter/y"])
        #expect(snapshot.states.map(\.sequence) == [3, 1])
        #expect(snapshot.states[0].payload.objectValue?["state"] == .object(["count": .integer(2)]))
        #expect(snapshot.omitted.isEmpty)
        #expect(try Self.snapshot(log, []).states.count == 3, "no prefix covers every topic")
        #expect(try Self.snapshot(log, ["worker:"]).states.isEmpty)
    }

    @Test func statesNoSubscriptionCoversAreForgottenButTheirCountsGoOn() throws {
        var log = PublicationLog(epoch: CorrelationEpoch(5))
        _ = log.numbered(Self.change("counter/x", 1), topic: "state:counter/x")
        _ = log.numbered(Self.change("auth", 1), topic: "state:auth")
        log.forgetStates(uncoveredBy: ["state:auth"])
        #expect(try Self.snapshot(log, []).states.map(\.topic) == ["state:auth"])
        #expect(log.stateBytes == Self.change("auth", 1).payload.count)
        #expect(Self.sequence(of: log.numbered(Self.change("counter/x", 2), topic: "state:counter/x"))?.number == 2)
    }

    @Test func theStatesOfALostWorkersMachinesAreForgotten() throws {
        var log = PublicationLog(epoch: CorrelationEpoch(5))
        _ = log.numbered(Self.change("counter/x", 1), topic: "state:counter/x")
        _ = log.numbered(Self.change("auth", 1), topic: "state:auth")
        log.forgetStates(of: ["counter/x"])
        #expect(try Self.snapshot(log, []).states.map(\.topic) == ["state:auth"])
    }

    @Test func statesOverTheBudgetAreOmittedAndNamed() throws {
        let small = Self.change("a", 1).payload.count
        var log = PublicationLog(epoch: CorrelationEpoch(5), maximumStateBytes: small + 10)
        _ = log.numbered(Self.change("a", 1), topic: "state:a")
        _ = log.numbered(Self.change("b", 1), topic: "state:b")
        let snapshot = try Self.snapshot(log, [])
        #expect(snapshot.states.map(\.topic) == ["state:a"])
        #expect(snapshot.omitted == ["state:b"])
        #expect(log.stateBytes <= log.maximumStateBytes)
    }

    @Test func pastItsTopicLimitTheLogStartsOverInANewEpoch() {
        var log = PublicationLog(epoch: CorrelationEpoch(5), maximumTopics: 2, nextEpoch: { CorrelationEpoch(6) })
        _ = log.numbered(Self.change("a", 1), topic: "state:a")
        _ = log.numbered(Self.change("a", 2), topic: "state:a")
        _ = log.numbered(Self.change("b", 1), topic: "state:b")
        let third = log.numbered(Self.change("c", 1), topic: "state:c")
        // A watcher reads the new epoch as a restart, never as a gap; the table stays bounded.
        #expect(Self.sequence(of: third) == PublicationSequence(epoch: 6, number: 1))
        #expect(Self.sequence(of: log.numbered(Self.change("a", 3), topic: "state:a")) == PublicationSequence(epoch: 6, number: 1))
        #expect(log.records.count == 2)
    }

    @Test func pastItsTopicBytesTheLogStartsOverToo() {
        let topic = "state:counter/" + String(repeating: "k", count: 1000)
        var log = PublicationLog(epoch: CorrelationEpoch(5), maximumTopicBytes: 3 * topic.utf8.count, nextEpoch: { CorrelationEpoch(6) })
        for index in 0..<3 { _ = log.numbered(Self.change("a", 1), topic: topic + "\(index)") }
        #expect(log.records.count == 1, "the third would cross the bytes: the log started over with it")
        #expect(log.topicBytes <= log.maximumTopicBytes)
        #expect(log.epoch == CorrelationEpoch(6))
    }

    @Test func theCoordinatorKeepsStatesWithinTheTopologysLimit() {
        var topology = CoreFixture.topology
        topology.limits.watchedStateBytes = 12_345
        let core = CoordinatorCore(topology: topology, eventsEndpoint: "inproc://events")
        #expect(core.publications.maximumStateBytes == 12_345)
    }

    // MARK: Through the driver

    @Test func theDriverNumbersWhatItPublishesInSendOrder() throws {
        let cluster = InMemoryCluster()
        cluster.registerAll()
        let key = cluster.counterKey(on: "data-1")
        cluster.fromWorkers((0..<3).map { ("data-1", Self.change("counter/\(key)", $0)) })
        cluster.fromWorker("edge", Self.change("auth", 0, worker: "edge"))
        let published = cluster.published().filter { $0.topic.hasPrefix("state:") }
        #expect(published.map(\.topic) == ["state:counter/\(key)", "state:counter/\(key)", "state:counter/\(key)", "state:auth"])
        #expect(published.compactMap { Self.sequence(of: $0.message)?.number } == [1, 2, 3, 1])
        let epochs = Set(published.compactMap { Self.sequence(of: $0.message)?.epoch })
        #expect(epochs.count == 1 && epochs.first != 0)
        // The payload is the worker's, as it was.
        #expect(published[0].message.payload == Self.change("counter/\(key)", 0).payload)
    }

    @Test func aSnapshotRequestIsAnsweredWithTheWatchedStatesAtTheirNumbers() throws {
        let cluster = InMemoryCluster()
        cluster.registerAll()
        let key = cluster.counterKey(on: "data-1")
        cluster.loop.receive([Inbound(socket: cluster.events, frames: [[1] + Array("state:counter/".utf8)])])
        cluster.fromWorkers((0..<4).map { ("data-1", Self.change("counter/\(key)", $0)) })
        _ = cluster.published()

        let request = WireMessage(Header(.snapshot, correlation: 31), payload: Array(#"{"prefixes":["state:counter/"]}"#.utf8))
        cluster.fromClient("watcher", request)
        let reply = try #require(cluster.toClient("watcher").first)
        #expect(reply.header.kind == .states)
        #expect(reply.header.correlation == 31)
        let snapshot = try WireJSON.decode(StateSnapshot.self, from: reply.payload)
        #expect(snapshot.states.map(\.topic) == ["state:counter/\(key)"])
        #expect(snapshot.states.first?.sequence == 4)
        #expect(snapshot.states.first?.payload.objectValue?["state"] == .object(["count": .integer(3)]))

        // The watcher goes away: the state would go stale, so it is no longer kept.
        cluster.loop.receive([Inbound(socket: cluster.events, frames: [[0] + Array("state:counter/".utf8)])])
        cluster.fromClient("watcher", request)
        let after = try #require(cluster.toClient("watcher").first)
        #expect(try WireJSON.decode(StateSnapshot.self, from: after.payload).states.isEmpty)
    }

    @Test func aSnapshotRequestThatIsNotJSONIsRefusedSayingHowToWriteIt() throws {
        let cluster = InMemoryCluster()
        cluster.fromClient("watcher", WireMessage(Header(.snapshot, correlation: 4), payload: Array("state:".utf8)))
        let reply = try #require(cluster.toClient("watcher").first)
        let error = try #require(reply.wireError)
        #expect(error.code == .malformedJSON)
        #expect(error.message.contains(#"{"prefixes":["state:counter/"]}"#))
        #expect(reply.header.correlation == 4)
    }
}
