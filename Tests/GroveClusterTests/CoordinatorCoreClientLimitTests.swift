@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
import GroveWire
import Testing

/// The pure rules behind "every request gets exactly one reply" in bounded memory, fed the
/// backlog a driver would report: a client with too much outstanding is owed a `busy` per
/// request, sent once its queue has room; a reply that does not fit becomes `reply-dropped`; a
/// worker's unanswered requests are bounded in bytes with the replies expected back.
@Suite("CoordinatorCore: client and worker limits", .timeLimit(.minutes(2)))
struct CoordinatorCoreClientLimitTests {
    static func fixture(clientOutbox: Int = 100, clientOutboxBytes: Int = 1 << 20, workerOutboxBytes: Int = 64 << 20) -> CoreFixture {
        var topology = CoreFixture.topology
        topology.queues = .init(mailboxCapacity: 64, workerOutbox: 100, workerOutboxBytes: workerOutboxBytes,
                                clientOutbox: clientOutbox, clientOutboxBytes: clientOutboxBytes)
        var fixture = CoreFixture(topology: topology)
        fixture.registerAll()
        return fixture
    }

    static func decide(_ core: inout CoordinatorCore, _ client: String, _ message: WireMessage,
                       backlog: ClientBacklog) -> ClientDecision {
        MessageView.with(message) { core.decide(client: Array(client.utf8), $0, backlog: backlog) }
    }

    static func get(_ correlation: UInt64, _ address: String = "auth") -> WireMessage {
        WireMessage(Header(.get, correlation: correlation), address: address)
    }

    @Test func requestsPastTheMessageLimitAreOwedBusiesSentWhenThereIsRoom() throws {
        var fixture = Self.fixture(clientOutbox: 10)
        let full = ClientBacklog(messages: 10, bytes: 500)
        // Under the limit: forwarded. At it: owed, nothing sent now.
        guard case .forward = Self.decide(&fixture.core, "A", Self.get(1), backlog: ClientBacklog(messages: 9, bytes: 450)) else {
            Issue.record("a client under its limit is served")
            return
        }
        guard case .act(let first) = Self.decide(&fixture.core, "A", Self.get(2), backlog: full),
              case .warn(let warning)? = first.first, first.count == 1 else {
            Issue.record("the first request over the limit is owed a busy, and the client's falling behind logged")
            return
        }
        #expect(warning.contains("answered busy until it catches up"))
        for correlation in 3...6 as ClosedRange<UInt64> {
            #expect(Self.decide(&fixture.core, "A", Self.get(correlation), backlog: full) == .act([]))
        }
        #expect(fixture.core.clientRules.ledger.owed[Array("A".utf8)]?.count == 5)
        #expect(fixture.core.clientRules.ledger.owed[Array("A".utf8)]?.runs.count == 1)
        // Still full: nothing released. Room for three: three, in order.
        #expect(fixture.core.releaseBusies(to: Array("A".utf8), backlog: full).isEmpty)
        let three = fixture.core.releaseBusies(to: Array("A".utf8), backlog: ClientBacklog(messages: 7, bytes: 350))
        #expect(three.compactMap(\.sentToClient).map(\.message.header.correlation) == [2, 3, 4])
        let busy = try #require(three.first?.sentToClient?.message.wireError)
        #expect(busy.code == .busy)
        #expect(busy.address == "auth")
        #expect(busy.message.contains("10 replies waiting unread") && busy.message.contains("queues.clientOutbox"))
        // Owed busies count as outstanding: with two owed and 8 waiting, a request is owed too.
        #expect(Self.decide(&fixture.core, "A", Self.get(7), backlog: ClientBacklog(messages: 8, bytes: 400)) == .act([]))
        let rest = fixture.core.releaseBusies(to: Array("A".utf8), backlog: .empty)
        #expect(rest.compactMap(\.sentToClient).map(\.message.header.correlation) == [5, 6, 7])
        #expect(fixture.core.clientRules.ledger.owed.isEmpty)
        // Another client is not affected by A's queue.
        guard case .forward = Self.decide(&fixture.core, "B", Self.get(1), backlog: .empty) else {
            Issue.record("another client is served")
            return
        }
    }

    @Test func requestsPastTheByteLimitAreOwedBusiesNamingIt() throws {
        var fixture = Self.fixture(clientOutboxBytes: 4096)
        let decision = Self.decide(&fixture.core, "A", Self.get(1), backlog: ClientBacklog(messages: 1, bytes: 4096))
        guard case .act(let actions) = decision, actions.allSatisfy({ $0.sentToClient == nil && $0.sentToWorker == nil }) else {
            Issue.record("a client over its byte limit is owed a busy, nothing sent now: \(decision)")
            return
        }
        let sent = fixture.core.releaseBusies(to: Array("A".utf8), backlog: .empty)
        let busy = try #require(sent.first?.sentToClient?.message.wireError)
        #expect(busy.code == .busy)
        #expect(busy.message.contains("4096 bytes") && busy.message.contains("queues.clientOutboxBytes"))
    }

    @Test func largeRepliesZeroMQStillHoldsCountTowardTheByteLimit() throws {
        var fixture = Self.fixture(clientOutboxBytes: 4096)
        // Nothing in the outbox: ZeroMQ took every reply, but holds 4096 bytes of large ones unwritten.
        let decision = Self.decide(&fixture.core, "A", Self.get(1), backlog: ClientBacklog(messages: 0, bytes: 4096))
        guard case .act(let actions) = decision, actions.allSatisfy({ $0.sentToClient == nil && $0.sentToWorker == nil }) else {
            Issue.record("a client whose large replies ZeroMQ still holds past its byte limit is owed a busy: \(decision)")
            return
        }
        #expect(fixture.core.clientRules.ledger.owed[Array("A".utf8)]?.count == 1)
    }

    @Test func aReplyThatDoesNotFitIsReplacedByReplyDropped() throws {
        var fixture = Self.fixture(clientOutboxBytes: 10_000)
        let client = Array("A".utf8)
        func admit(_ size: Int, _ backlog: ClientBacklog) -> (replacement: WireMessage, warning: String?)? {
            fixture.core.admitReply(to: client, size: size, kind: .state, correlation: 42, address: "auth", backlog: backlog)
        }
        // Nothing waits: let through, however large. Small: let through. Fits: let through.
        #expect(admit(50_000, .empty) == nil)
        #expect(admit(CoordinatorCore.smallReply, ClientBacklog(messages: 5, bytes: 10_000)) == nil)
        #expect(admit(3000, ClientBacklog(messages: 1, bytes: 7000)) == nil)
        // Does not fit: replaced under the same correlation id, and the first time logged.
        let first = try #require(admit(3001, ClientBacklog(messages: 1, bytes: 7000)))
        #expect(first.replacement.header.kind == .error)
        #expect(first.replacement.header.correlation == 42)
        #expect(first.replacement.address == "auth")
        let error = try #require(first.replacement.wireError)
        #expect(error.code == .replyDropped)
        #expect(error.message.contains("3001 bytes") && error.message.contains("queues.clientOutboxBytes"))
        #expect(first.warning?.contains("not reading its replies") == true)
        #expect(first.replacement.payload.count + Header.size + 4 <= CoordinatorCore.smallReply, "the replacement is itself small")
        let second = try #require(admit(3001, ClientBacklog(messages: 2, bytes: 7400)))
        #expect(second.warning == nil, "not every drop is logged")
        // Nothing in the outbox, but large replies ZeroMQ still holds for the client (HeldBytes)
        // count the same: ZeroMQ's queue is no way around the budget.
        #expect(admit(3000, ClientBacklog(messages: 0, bytes: 7000)) == nil)
        #expect(try #require(admit(3001, ClientBacklog(messages: 0, bytes: 7000))).replacement.wireError?.code == .replyDropped)
        // A client that went away is forgotten.
        fixture.core.forget(client: client)
        #expect(fixture.core.clientRules.ledger.dropped.isEmpty)
    }

    @Test func aWorkersUnansweredBytesWithExpectedRepliesAreBounded() throws {
        var fixture = Self.fixture(workerOutboxBytes: 300_000)
        let edge = fixture.core.number(of: "edge")
        let big = WireMessage(Header(.state), address: "auth", payload: [UInt8](repeating: 0x20, count: 100_000))
        // One get whose state is 100 kB teaches the coordinator the size of edge's replies.
        let first = try #require(fixture.fromClient("A", Self.get(1)).first?.sentToWorker)
        var reply = big
        reply.header.correlation = first.message.header.correlation
        _ = fixture.fromWorker("edge", reply)
        #expect(fixture.core.expectedReplyBytes[edge] == 100_004)
        // Two in flight expect 200 kB back; a third would reach 300 kB: busy, naming the limit.
        let ids = try (2...3 as ClosedRange<UInt64>).map { try #require(fixture.fromClient("A", Self.get($0)).first?.sentToWorker) }
        #expect(fixture.core.inFlightBytes[edge] == 8)
        let refused = try errorReply(in: fixture.fromClient("A", Self.get(4)), to: "A", correlation: 4)
        #expect(refused.code == .busy)
        #expect(refused.message.contains("queues.workerOutboxBytes"))
        // One answer frees room for one more.
        reply.header.correlation = ids[0].message.header.correlation
        _ = fixture.fromWorker("edge", reply)
        let fifth = try #require(fixture.fromClient("A", Self.get(5)).first?.sentToWorker)
        // The estimate decays as replies get small again.
        for sent in [ids[1], fifth] {
            _ = fixture.fromWorker("edge", WireMessage(Header(.accepted, correlation: sent.message.header.correlation), address: "auth"))
        }
        for correlation in 6...70 as ClosedRange<UInt64> {
            let sent = try #require(fixture.fromClient("A", Self.get(correlation)).first?.sentToWorker)
            _ = fixture.fromWorker("edge", WireMessage(Header(.accepted, correlation: sent.message.header.correlation), address: "auth"))
        }
        #expect(fixture.core.expectedReplyBytes[edge] < 50_000)
        // A lost worker holds nothing.
        _ = try #require(fixture.fromClient("A", Self.get(71)).first?.sentToWorker)
        #expect(fixture.core.inFlightBytes[edge] == 4)
        _ = fixture.core.lose("edge", reason: "test", cause: .exited)
        #expect(fixture.core.inFlightBytes[edge] == 0)
    }

    /// A client whose replies wait unread fills at most half of a worker's queue: the other half
    /// stays for clients that read (issue 34: a slow client never costs anyone else's requests).
    @Test func aClientThatDoesNotReadFillsAtMostHalfAWorkersQueue() throws {
        var fixture = Self.fixture(clientOutbox: 1000)
        let edge = fixture.core.number(of: "edge")
        let waiting = ClientBacklog(messages: 1, bytes: 100)
        for correlation in 1...50 as ClosedRange<UInt64> {
            guard case .forward = Self.decide(&fixture.core, "slow", Self.get(correlation), backlog: waiting) else {
                Issue.record("request \(correlation) of the slow client is within its half")
                return
            }
        }
        #expect(fixture.core.inFlight[edge] == 50)
        guard case .act(let actions) = Self.decide(&fixture.core, "slow", Self.get(51), backlog: waiting) else {
            Issue.record("the 51st request of a slow client is refused")
            return
        }
        let refused = try errorReply(in: actions, to: "slow", correlation: 51)
        #expect(refused.code == .busy)
        #expect(refused.message.contains("half") && refused.message.contains("queues.workerOutbox"), "\(refused.message)")
        // A client that reads still gets the other half.
        for correlation in 1...50 as ClosedRange<UInt64> {
            guard case .forward = Self.decide(&fixture.core, "reader", Self.get(correlation), backlog: .empty) else {
                Issue.record("request \(correlation) of a client that reads is served")
                return
            }
        }
        #expect(fixture.core.inFlight[edge] == 100)
    }
}
