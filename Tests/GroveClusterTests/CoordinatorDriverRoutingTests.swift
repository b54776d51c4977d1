@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
import GroveWire
import Testing

/// What the coordinator's real driver does with requests and replies, on an `EmbeddedLoop`
/// (`InMemoryCluster`): order per machine, correlation across machines and clients, batches
/// taken or refused as a whole. A client that does not read: `CoordinatorDriverSlowClientTests`.
@Suite(.timeLimit(.minutes(2)))
struct CoordinatorDriverRoutingTests {
    @Test func oneMachinesRepliesComeBackInTheOrderItsRequestsWent() throws {
        let cluster = InMemoryCluster()
        cluster.registerAll()
        let address = "counter/" + cluster.counterKey(on: "data-1")
        // Five requests in one turn: forwarded as one batch, in order.
        // The client's correlations differ from the ids the coordinator forwards under (from 1).
        cluster.fromClients((1...5).map { number in ("c", .event(address, "{\"n\":\(number)}", correlation: UInt64(100 + number))) })
        let sent = cluster.toWorker("data-1").filter { $0.header.kind != .observe && $0.header.kind != .heartbeat }
        #expect(sent.map(\.header.kind) == [.batch])
        let requests = sent.unbatched
        #expect(requests.map(\.text) == (1...5).map { "{\"n\":\($0)}" })

        // The worker answers them in order, in one batch; the client, which sent lone messages,
        // gets lone replies, in that order, each under its own correlation.
        cluster.fromWorker("data-1", batch: requests.map { $0.stateReply($0.text) })
        let replies = cluster.toClient("c")
        #expect(replies.map(\.header.kind) == Array(repeating: .state, count: 5))
        #expect(replies.map(\.header.correlation) == [101, 102, 103, 104, 105])
        #expect(replies.map(\.text) == (1...5).map { "{\"n\":\($0)}" })
    }

    @Test func repliesArrivingOutOfOrderAcrossMachinesReachTheirRequests() throws {
        let cluster = InMemoryCluster()
        cluster.registerAll()
        let one = "counter/" + cluster.counterKey(on: "data-1")
        let two = "counter/" + cluster.counterKey(on: "data-2")
        let otherOnOne = "counter/" + (1...1000).map(String.init).first {
            cluster.topology.placement(ofMachine: "counter", key: $0) == "data-1" && "counter/\($0)" != one
        }!
        // Two clients, each numbering its requests from 1.
        cluster.fromClient("a", .event(one, #"{"for":"a1"}"#, correlation: 1))
        cluster.fromClient("a", .event("auth", #"{"for":"a2"}"#, correlation: 2))
        cluster.fromClient("b", .event(two, #"{"for":"b1"}"#, correlation: 1))
        cluster.fromClient("b", .event(otherOnOne, #"{"for":"b2"}"#, correlation: 2))
        let onOne = cluster.requests(to: "data-1")
        let onTwo = cluster.requests(to: "data-2")
        let onEdge = cluster.requests(to: "edge")
        #expect((onOne.count, onTwo.count, onEdge.count) == (2, 1, 1))
        // The coordinator's ids are its own: no two requests in flight share one.
        #expect(Set((onOne + onTwo + onEdge).map(\.header.correlation)).count == 4)

        // Answered backwards: the edge, then data-2, then data-1's second machine before its first.
        cluster.fromWorker("edge", onEdge[0].stateReply(onEdge[0].text))
        cluster.fromWorker("data-2", onTwo[0].stateReply(onTwo[0].text))
        cluster.fromWorker("data-1", onOne[1].stateReply(onOne[1].text))
        cluster.fromWorker("data-1", onOne[0].stateReply(onOne[0].text))
        let toA = cluster.toClient("a")
        let toB = cluster.toClient("b")
        #expect(toA.map(\.header.correlation) == [2, 1])
        #expect(toA.map(\.text) == [#"{"for":"a2"}"#, #"{"for":"a1"}"#])
        #expect(toB.map(\.header.correlation) == [1, 2])
        #expect(toB.map(\.text) == [#"{"for":"b1"}"#, #"{"for":"b2"}"#])
    }

    @Test func onlyTheWorkerARequestWentToMayAnswerIt() throws {
        let cluster = InMemoryCluster()
        cluster.registerAll()
        cluster.fromClient("c", .event("counter/" + cluster.counterKey(on: "data-1"), correlation: 5))
        let request = try #require(cluster.requests(to: "data-1").first)
        cluster.fromWorker("data-2", request.stateReply(#"{"from":"data-2"}"#))
        #expect(cluster.toClient("c").isEmpty)
        cluster.fromWorker("data-1", request.stateReply(#"{"from":"data-1"}"#))
        #expect(cluster.toClient("c").map(\.text) == [#"{"from":"data-1"}"#])
    }

    /// Batches a client may not send, each refused as a whole.
    static let malformedBatches: [(String, [[UInt8]])] = {
        let good = InMemoryCluster.batch([.event("auth", correlation: 1), .event("auth", correlation: 2)])
        var unknownKind = good
        unknownKind[2][good[2].count / 2] = 0xEE  // the second envelope's kind byte
        return [
            ("the header counts three envelopes, the payload holds two", [Header(.batch, correlation: 3).bytes, [], good[2]]),
            ("the last envelope is cut short", [good[0], [], Array(good[2].dropLast(3))]),
            ("an envelope of no known kind", unknownKind),
            ("no envelope at all", [Header(.batch, correlation: 0).bytes, [], []]),
        ]
    }()

    @Test(arguments: malformedBatches)
    func aMalformedBatchIsRefusedAsAWholeAndNothingInItIsRouted(_ why: String, _ frames: [[UInt8]]) throws {
        let cluster = InMemoryCluster()
        cluster.registerAll()
        cluster.fromClient("c", frames: frames)
        let replies = cluster.toClient("c")
        try #require(replies.count == 1, "\(why): \(replies)")
        #expect(replies[0].header.correlation == 0, "not one envelope's: it would look like an answer to it")
        #expect(replies[0].wireError?.code == .malformedFrame, "\(why)")
        #expect(cluster.requests(to: "edge").isEmpty, "\(why)")
        #expect(!cluster.driver.core.batchingClients.contains(Array("c".utf8)), "\(why)")
    }

    @Test func theMalformedBatchesAreMalformedOnlyWhereTheySayTheyAre() throws {
        // The well-formed batch they are made from is taken, so each refusal above is its own flaw's.
        let cluster = InMemoryCluster()
        cluster.registerAll()
        cluster.fromClient("c", frames: InMemoryCluster.batch([.event("auth", correlation: 1), .event("auth", correlation: 2)]))
        #expect(cluster.toClient("c").isEmpty)
        #expect(cluster.requests(to: "edge").map(\.header.kind) == [.event, .event])
    }

    @Test func aBatchingClientGetsItsRepliesBatched() throws {
        let cluster = InMemoryCluster()
        cluster.registerAll()
        let one = "counter/" + cluster.counterKey(on: "data-1")
        let two = "counter/" + cluster.counterKey(on: "data-2")
        cluster.fromClient("c", batch: [.event(one, correlation: 1), .event(two, correlation: 2), .event("nowhere", correlation: 3)])
        // The envelope for no machine is refused alone; the others go on.
        #expect(cluster.toClient("c").map(\.wireError?.code) == [.unknownMachine])
        let onOne = cluster.requests(to: "data-1")
        let onTwo = cluster.requests(to: "data-2")
        #expect((onOne.count, onTwo.count) == (1, 1))

        // Both workers answer in the same turn: one batch back to the client, in arrival order.
        cluster.fromWorkers([("data-2", onTwo[0].stateReply(#"{"n":2}"#)), ("data-1", onOne[0].stateReply(#"{"n":1}"#))])
        let replies = cluster.toClient("c")
        #expect(replies.map(\.header.kind) == [.batch])
        #expect(replies.first?.header.correlation == 2, "the batch header counts its envelopes")
        #expect(replies.unbatched.map(\.header.correlation) == [2, 1])
        #expect(replies.unbatched.map(\.text) == [#"{"n":2}"#, #"{"n":1}"#])
    }
}
