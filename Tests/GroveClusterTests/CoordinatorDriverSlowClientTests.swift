@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
import GroveWire
import ZeroMQ
import Testing

/// A client that does not read its replies, on the real driver over an `EmbeddedLoop`
/// (`InMemoryCluster`, client outbox 4): every request it sends gets exactly one reply — its
/// own, a `busy` naming the limit, or a `reply-dropped` in place of a reply too large — and what
/// the coordinator holds for it stays within the limits however much it sends.
@Suite(.timeLimit(.minutes(2)))
struct CoordinatorDriverSlowClientTests {
    /// A client `slow` that reads nothing and has sent 4 events (correlations 1-4) to one
    /// counter of `data-1`; its outbox holds 4 messages. The events are forwarded, not answered.
    static func slowClient() -> (cluster: InMemoryCluster, slow: [UInt8], address: String, requests: [WireMessage]) {
        let cluster = InMemoryCluster()  // client outbox: 4 messages
        cluster.registerAll()
        let slow = Array("slow".utf8)
        let address = "counter/" + cluster.counterKey(on: "data-1")
        cluster.loop.holdBack(slow, on: cluster.clients)
        for number in 1...4 { cluster.fromClient("slow", .event(address, correlation: UInt64(number))) }
        return (cluster, slow, address, cluster.requests(to: "data-1"))
    }

    @Test func aClientOverItsMessageLimitIsOwedABusyForEveryRequest() throws {
        let (cluster, slow, address, requests) = Self.slowClient()
        #expect(requests.count == 4)
        cluster.fromWorker("data-1", batch: requests.map { $0.stateReply("{}") })
        #expect(cluster.loop.pending(cluster.clients, peer: slow) == 4)

        // Its queue is full: 1000 more requests are owed a busy each, none forwarded, and the
        // queue does not grow (the busies are one run of correlation ids, not messages).
        for number in 5...1004 { cluster.fromClient("slow", .event(address, correlation: UInt64(number))) }
        cluster.advance(by: .milliseconds(100))
        #expect(cluster.requests(to: "data-1").isEmpty)
        #expect(cluster.loop.pending(cluster.clients, peer: slow) == 4)
        let owed = try #require(cluster.driver.core.clientRules.ledger.owed[slow])
        #expect(owed.count == 1000)
        #expect(owed.runs.count == 1)
        #expect(cluster.warnings.filter { $0.contains("answered busy") }.count == 1, "\(cluster.warnings)")
        // Another client is served meanwhile.
        cluster.fromClient("fast", .event(address, correlation: 1))
        #expect(cluster.requests(to: "data-1").count == 1)

        // It reads again: its four replies, then one busy per refused request, in order, each
        // once (sent as its outbox drains, and on ticks).
        cluster.loop.release(slow, on: cluster.clients)
        var replies = cluster.toClient("slow")
        #expect(replies.prefix(4).map(\.header.correlation) == [1, 2, 3, 4])
        #expect(replies.prefix(4).allSatisfy { $0.header.kind == .state })
        while cluster.driver.core.clientRules.ledger.owed[slow] != nil {
            cluster.loop.tick()
            let more = cluster.toClient("slow")
            try #require(!more.isEmpty, "owed busies are sent once the client reads")
            replies += more
        }
        let busies = replies.dropFirst(4)
        #expect(busies.map(\.header.correlation) == (5...1004).map { UInt64($0) })
        #expect(busies.allSatisfy { $0.wireError?.code == .busy && $0.address == address })
        #expect(busies.first?.wireError?.message.contains("4 replies waiting unread") == true)
        #expect(busies.first?.wireError?.message.contains("queues.clientOutbox") == true)

        // Caught up: it is served again.
        cluster.fromClient("slow", .event(address, correlation: 1005))
        #expect(cluster.requests(to: "data-1").map(\.header.kind) == [.event])
    }

    @Test func aReplyOverTheByteBudgetIsReplacedAndLaterRequestsAreBusy() throws {
        var topology = InMemoryCluster.topology
        topology.queues = .init(mailboxCapacity: 64, workerOutbox: 100, clientOutbox: 100, clientOutboxBytes: 4096)
        let cluster = InMemoryCluster(topology: topology)
        cluster.registerAll()
        let slow = Array("slow".utf8)
        cluster.loop.holdBack(slow, on: cluster.clients)
        for number in 1...3 { cluster.fromClient("slow", WireMessage(Header(.get, correlation: UInt64(number)), address: "auth")) }
        let requests = cluster.requests(to: "edge")
        #expect(requests.count == 3)

        // Three 5000-byte states: the first waits (nothing waited), the other two do not fit.
        let big = #"{"s":""# + String(repeating: "x", count: 5000) + #""}"#
        cluster.fromWorker("edge", batch: requests.map { $0.stateReply(big) })
        let waiting = cluster.loop.backlog(cluster.clients, peer: slow)
        #expect(waiting.messages == 3)
        #expect(waiting.bytes < 4096 + 5100)
        #expect(cluster.warnings.contains { $0.contains("not reading its replies") }, "\(cluster.warnings)")

        // Over its byte budget: a further request is owed a busy that names the byte limit.
        cluster.fromClient("slow", WireMessage(Header(.get, correlation: 4), address: "auth"))
        #expect(cluster.requests(to: "edge").isEmpty)

        cluster.loop.release(slow, on: cluster.clients)
        cluster.loop.tick()
        let replies = cluster.toClient("slow")
        try #require(replies.map(\.header.correlation) == [1, 2, 3, 4])
        #expect(replies.first?.text == big)
        #expect(replies[1].wireError?.code == .replyDropped)
        #expect(replies[2].wireError?.code == .replyDropped)
        #expect(replies[2].wireError?.message.contains("queues.clientOutboxBytes") == true)
        #expect(replies[3].wireError?.code == .busy)
        #expect(replies[3].wireError?.message.contains("4096 bytes") == true)
    }

    @Test func aClientThatGoesAwayIsOwedNothingMore() throws {
        let (cluster, slow, address, requests) = Self.slowClient()
        cluster.fromWorker("data-1", batch: requests.map { $0.stateReply("{}") })
        for number in 5...20 { cluster.fromClient("slow", .event(address, correlation: UInt64(number))) }
        #expect(cluster.driver.core.clientRules.ledger.owed[slow]?.count == 16)

        // Gone: what waited for it fails at the next retry, and so is forgotten with what it was owed.
        cluster.loop.disconnect(slow, on: cluster.clients)
        cluster.loop.release(slow, on: cluster.clients)
        cluster.loop.tick()
        #expect(cluster.loop.pending(cluster.clients, peer: slow) == 0)
        #expect(cluster.driver.core.clientRules.ledger.owed.isEmpty)
        #expect(cluster.toClient("slow").isEmpty)
    }
}
