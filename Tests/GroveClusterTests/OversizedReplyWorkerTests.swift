@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
import GroveExamples
import GroveWire
import Testing

/// A real worker whose machine's state outgrows the coordinator's frame limit
/// (`limits.messageBytes`), behind the coordinator's real driver, with no socket: every request
/// still gets one reply, and no message the worker sends passes the limit.
@Suite(.timeLimit(.minutes(2)))
struct OversizedReplyWorkerTests {
    static let topology = Topology(
        name: "small-frames",
        coordinator: .init(clients: "inproc://clients", workers: "inproc://workers", events: "inproc://events"),
        workers: [.init(name: "main")],
        machines: [.init(name: "nav", type: "AppNavigator", worker: "main", keyed: true)],
        heartbeat: .init(intervalMs: 50, timeoutMs: 200),
        limits: .init(payloadBytes: 4096, messageBytes: 8192)
    )

    /// A `push` of a detail screen whose title is `size` bytes: the state grows by about that much.
    static func push(_ address: String, size: Int, correlation: UInt64) -> WireMessage {
        .event(address, #"{"push":{"_0":{"detail":{"_0":{"id":"i","title":"\#(String(repeating: "x", count: size))"}}}}}"#,
               correlation: correlation)
    }

    @Test func aStateOverTheLimitIsAnsweredReplyTooLargeAndGetsToo() async throws {
        let cluster = InMemoryCluster(topology: Self.topology)
        var configuration = WorkerConfiguration()
        configuration.register(AppNavigator.self)
        let worker = try InMemoryWorker(name: "main", configuration: configuration)
        defer { worker.stop() }
        worker.start()
        let registered = cluster.settle(worker) { cluster.driver.ready.withLock { $0.all } }
        try #require(registered, "the worker's registration was not accepted: \(cluster.warnings)")

        var replies: [WireMessage] = []
        func ask(_ messages: [WireMessage]) async throws {
            replies = []
            cluster.fromClients(messages.map { ("c", $0) })
            let answered = cluster.settle(worker) {
                replies += cluster.toClient("c")
                return replies.count >= messages.count
            }
            try #require(answered, "\(replies.count) replies of \(messages.count)")
        }

        // Three pushes of ~3 KB: the third state is over 8192 bytes. Plus many small events in
        // the same turn, whose replies share batches with the big ones.
        try await ask([Self.push("nav/a", size: 3000, correlation: 1), Self.push("nav/a", size: 3000, correlation: 2),
                       Self.push("nav/a", size: 3000, correlation: 3)]
                      + (10 ..< 60).map { Self.push("nav/b\($0)", size: 300, correlation: UInt64($0)) })
        let third = try #require(replies.first { $0.header.correlation == 3 })
        // Not #require(third.wireError): a failure would print the whole state.
        guard let error = third.wireError else {
            Issue.record("the third reply is \(third.header.kind.name) of \(third.payload.count) bytes, not an error")
            return
        }
        #expect(error.code == .replyTooLarge)
        #expect(error.message.contains("the state of nav/a is"), "\(error.message)")
        #expect(error.message.contains("over limits.messageBytes 8192"), "\(error.message)")
        #expect(replies.filter { $0.header.kind == .state }.count == 52, "\(replies.map(\.header.kind.name))")
        // Nothing the coordinator would refuse left the worker: not the state, not a batch of
        // the 52 small replies (about 20 KB together).
        #expect(worker.largestFrameSent <= 8192, "a frame of \(worker.largestFrameSent) bytes")

        // A get of that address gets the same error, not silence; other addresses still answer.
        try await ask([WireMessage(Header(.get, correlation: 100), address: "nav/a"), Self.push("nav/c", size: 10, correlation: 101)])
        #expect(replies.first { $0.header.correlation == 100 }?.wireError?.code == .replyTooLarge)
        #expect(replies.first { $0.header.correlation == 101 }?.header.kind == .state)
    }
}
