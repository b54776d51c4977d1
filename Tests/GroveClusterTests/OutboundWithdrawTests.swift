@testable import GroveCluster
@testable import GroveWorker
@_spi(GroveInternal) import GroveWire
import Testing
import ZeroMQ

/// The replies a turn holds back for instances that moved to another worker (handoff) are
/// replaced by `unavailable` under the same correlation; the others leave as they were.
@Suite(.timeLimit(.minutes(2)))
struct OutboundWithdrawTests {
    @Test func heldRepliesOfMovedInstancesBecomeUnavailableAndTheRestStay() throws {
        let loop = DrivenLoop()
        let collector = OutboundCollector()
        collector.begin()
        let via = WorkerLoop.driven(loop)
        collector.send(.state, flags: [], correlation: 1, address: "counter/a", payload: Array("1".utf8), socket: 7, via: via)
        collector.send(.state, flags: [.binary], correlation: 2, address: "counter/b", payload: Array("2".utf8), socket: 7, via: via)
        collector.send(.accepted, flags: [], correlation: 3, address: "counter/a", payload: EmptyCollection(), socket: 7, via: via)
        collector.send(.stateChanged, flags: [], correlation: 0, address: "counter/a", payload: Array("{}".utf8), socket: 7, via: via)

        let replaced = collector.withdraw(repliesTo: ["counter/a", "counter/z"]) { address in
            WireError(.unavailable, "instance \(address) moved; retry", address: address)
        }
        #expect(replaced == 2)
        collector.end(socket: 7, via: via)

        let posted = loop.takePosted()
        #expect(posted.count == 1)
        let batch = try #require(posted.first?.frames)
        let envelopes = try Batch.envelopes(in: batch[2])
        let messages = try envelopes.map { try $0.message(in: batch[2]) }
        #expect(messages.map(\.header.kind) == [.error, .state, .error, .stateChanged])
        #expect(messages.map(\.header.correlation) == [1, 2, 3, 0])
        #expect(messages.map(\.address) == ["counter/a", "counter/b", "counter/a", "counter/a"])
        #expect(messages[1].header.flags == [.binary])
        #expect(messages[1].payload == Array("2".utf8))
        let error = try WireJSON.decode(WireError.self, from: Array(messages[0].payload), code: .malformedFrame)
        #expect(error.code == .unavailable)
        #expect(error.message.contains("counter/a moved; retry"))
    }

    @Test func nothingHeldNothingReplaced() {
        let collector = OutboundCollector()
        // Not collecting: what was sent has left already.
        #expect(collector.withdraw(repliesTo: ["counter/a"]) { WireError(.unavailable, "moved", address: $0) } == 0)
    }
}
