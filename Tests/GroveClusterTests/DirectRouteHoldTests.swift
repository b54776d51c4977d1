@testable import GroveCluster
@testable import GroveWorker
@_spi(GroveInternal) import GroveWire
import Testing
import ZeroMQ

/// What a worker's direct route holds while a turn runs (docs/DIRECT-ROUTES.md, 2.2): replies
/// under direct ids leave only when the turn ends (``WorkerRuntime/endTurn()`` ends it after the
/// commit), in order; a reply whose turn's commit was refused becomes `moved` `not-committed`.
/// On a ``DrivenLoop``: no socket.
@Suite(.timeLimit(.minutes(2))) struct DirectRouteHoldTests {
    static func route(_ loop: DrivenLoop) -> DirectRoute {
        DirectRoute(worker: "edge-1", endpoint: "ipc:///run/t/direct/edge-1.1", socket: 7, loop: .driven(loop), curve: false)
    }

    /// The direct ids of the replies among `ready`.
    static func ids(_ ready: [DirectRoute.Outgoing]) -> [UInt64] {
        ready.compactMap { outgoing in
            guard case .reply(_, _, let id, _, _) = outgoing else { return nil }
            return id
        }
    }

    @Test func aTurnsRepliesLeaveWhenItEndsInOrder() throws {
        let loop = DrivenLoop()
        let link = WorkerLink(worker: "edge-1", loop: .driven(loop), socket: 0, direct: Self.route(loop))
        let turn = Turn(outbound: link.outbound, direct: link.direct)
        let first = CorrelationEpoch.direct.id(1), second = CorrelationEpoch.direct.id(2)
        turn.begin(collectingWoken: false)
        link.send(.state, correlation: first, address: "counter/a", payload: Array(#"{"count":1}"#.utf8))
        link.send(.accepted, correlation: second, address: "counter/a")
        // A coordinator's reply is not the direct route's (and the gate is closed: not welcomed).
        link.send(.state, correlation: 5, address: "counter/b", payload: Array(#"{"count":1}"#.utf8))
        #expect(!loop.hasPosted, "held until the turn ends")
        link.flush()
        #expect(loop.takePosted().map(\.socket) == [7], "one wake-up for the turn's replies")
        #expect(Self.ids(link.direct!.takeReady()) == [first, second])
        // Outside a turn, a reply leaves at once.
        link.send(.accepted, correlation: CorrelationEpoch.direct.id(3), address: "counter/a")
        #expect(loop.takePosted().count == 1)
        #expect(Self.ids(link.direct!.takeReady()) == [CorrelationEpoch.direct.id(3)])
    }

    @Test func aRefusedCommitTurnsHeldRepliesIntoMovedNotCommitted() throws {
        let loop = DrivenLoop()
        let route = Self.route(loop)
        route.begin()
        route.reply(.state, flags: [], correlation: CorrelationEpoch.direct.id(1), address: "counter/a", payload: Array("{}".utf8))
        route.reply(.state, flags: [], correlation: CorrelationEpoch.direct.id(2), address: "counter/b", payload: Array("{}".utf8))
        route.withdraw(repliesTo: ["counter/a"], worker: "edge-1")
        route.end()
        let ready = route.takeReady()
        guard case .reply(let kind, _, let id, _, let payload) = ready.first, ready.count == 2,
              case .reply(.state, _, _, _, _) = ready[1] else {
            Issue.record("two replies, the first withdrawn: \(ready)")
            return
        }
        #expect(kind == .error && id == CorrelationEpoch.direct.id(1))
        let error = try WireJSON.decode(WireError.self, from: payload)
        #expect(error.code == .moved && error.reason == .notCommitted, "\(error.message)")
    }
}
