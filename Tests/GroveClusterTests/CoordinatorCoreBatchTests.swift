import Foundation
@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
import GroveWire
import Testing

/// A client's batch through the core's general path (the driver forwards batches itself, with
/// the same rules).
@Suite("CoordinatorCore: client batches", .timeLimit(.minutes(2)))
struct CoordinatorCoreBatchTests {
    static func batch(count: UInt64, _ messages: [WireMessage]) -> WireMessage {
        var payload: [UInt8] = []
        for message in messages { Batch.append(message, to: &payload) }
        return WireMessage(Header(.batch, correlation: count), payload: payload)
    }

    static func event(_ correlation: UInt64, to address: String = "counter/k") -> WireMessage {
        WireMessage(Header(.event, correlation: correlation), address: address, payload: Array("\"increment\"".utf8))
    }

    @Test func aBatchIsForwardedEnvelopeByEnvelope() throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        let actions = fixture.fromClient("A", Self.batch(count: 2, [Self.event(1), Self.event(2)]))
        #expect(actions.compactMap(\.sentToWorker).count == 2)
        #expect(fixture.core.batchingClients.contains(Array("A".utf8)))
    }

    /// Refused as a whole, under correlation 0: an envelope's correlation would read as an
    /// answer to that envelope while the others got none.
    @Test(arguments: [
        (UInt64(0), [WireMessage](), "holds no envelopes"),
        (UInt64(3), [event(7)], "says 3 envelope(s) but the payload holds 1"),
        (UInt64(1), [event(7), event(8)], "says 1 envelope(s) but the payload holds more"),
    ])
    func aBatchThatDoesNotAddUpIsRefusedAsAWhole(count: UInt64, messages: [WireMessage], says: String) throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        let error = try errorReply(in: fixture.fromClient("A", Self.batch(count: count, messages)), to: "A", correlation: 0)
        #expect(error.code == .malformedFrame)
        #expect(error.message.contains(says), "\(error.message)")
    }

    /// Found by an attacker's review: one batch of 100,000 `list`s held the coordinator for
    /// four and a half minutes, workers declared lost meanwhile. What the coordinator answers
    /// itself is bounded per batch; events beside them do not count.
    @Test func aBatchOfMoreRequestsThanTheCoordinatorAnswersPerBatchIsRefusedAsAWhole() throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        let limit = CoordinatorCore.answeredHerePerBatch
        func list(_ correlation: UInt64) -> WireMessage { WireMessage(Header(.list, correlation: correlation)) }
        let within = (1 ... UInt64(limit)).map(list) + [Self.event(999)]
        let answered = fixture.fromClient("A", Self.batch(count: UInt64(within.count), within))
        #expect(answered.compactMap(\.sentToWorker).count == 1)
        #expect(answered.filter { if case .toClient = $0 { true } else { false } }.count == limit)

        let over = (1 ... UInt64(limit + 1)).map(list)
        let error = try errorReply(in: fixture.fromClient("B", Self.batch(count: UInt64(over.count), over)), to: "B", correlation: 0)
        #expect(error.code == .malformedFrame)
        #expect(error.message.contains("holds \(limit + 1) requests the coordinator answers itself"), "\(error.message)")
        #expect(!fixture.core.batchingClients.contains(Array("B".utf8)))
    }

    /// Found by an attacker (h31): one 16 MiB batch of 700,000 `get`s held a release
    /// coordinator's loop for 1.9 s. The header's count is bounded (`limits.batchEnvelopes`)
    /// before any envelope is read: past it the batch is refused whole, `oversized`, and nothing
    /// of it is forwarded; within it the batch is served.
    @Test func aBatchWhoseHeaderCountsMoreThanTheLimitIsRefusedBeforeAnyEnvelopeIsRead() throws {
        var topology = CoreFixture.topology
        topology.limits.batchEnvelopes = 3
        var fixture = CoreFixture(topology: topology)
        fixture.registerAll()
        let over = (1...4).map { Self.event(UInt64($0)) }
        let error = try errorReply(in: fixture.fromClient("A", Self.batch(count: 4, over)), to: "A", correlation: 0)
        #expect(error.code == .oversized)
        #expect(error.message.contains("counts 4 envelopes") && error.message.contains("the coordinator accepts at most 3")
                && error.message.contains("limits.batchEnvelopes") && error.message.contains("split it into batches of at most 3"),
                "\(error.message)")
        #expect(!fixture.core.batchingClients.contains(Array("A".utf8)))
        // The header alone decides: a count of 700,000 over a payload of one envelope is
        // refused for its count, not walked.
        let liar = try errorReply(in: fixture.fromClient("A", Self.batch(count: 700_000, [Self.event(9)])), to: "A", correlation: 0)
        #expect(liar.code == .oversized && liar.message.contains("counts 700000 envelopes"), "\(liar.message)")
        // Within the limit, the same client's next batch is served, envelope by envelope.
        let within = fixture.fromClient("A", Self.batch(count: 3, Array(over.prefix(3))))
        #expect(within.compactMap(\.sentToWorker).count == 3, "\(within)")
    }

    @Test func aNestedBatchIsRefusedAsAWholeUnderCorrelationZero() throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        var nested = Self.batch(count: 2, [Self.event(5), Self.event(6)])
        nested.payload[0] = MessageKind.batch.rawValue  // the first envelope claims to be a batch
        let error = try errorReply(in: fixture.fromClient("A", nested), to: "A", correlation: 0)
        #expect(error.code == .malformedFrame)
        #expect(error.message.contains("nested batch"))
    }

    /// An envelope whose address is not UTF-8 is refused alone; the rest are forwarded.
    @Test func anEnvelopeWithABadAddressIsRefusedAlone() throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        var bytes: [UInt8] = []
        Batch.append(Self.event(1), to: &bytes)
        let badStart = bytes.count
        Batch.append(Self.event(2, to: "counter/x"), to: &bytes)
        bytes[badStart + 12 + 8] = 0xFF  // the last byte of "counter/x"
        let actions = fixture.fromClient("A", WireMessage(Header(.batch, correlation: 2), payload: bytes))
        #expect(actions.compactMap(\.sentToWorker).count == 1)
        let refused = try #require(actions.compactMap(\.sentToClient).first)
        #expect(refused.message.header.correlation == 2)
        #expect(try payload(WireError.self, of: refused.message).code == .malformedFrame)
    }
}
