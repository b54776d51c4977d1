import Foundation
@testable import ZeroMQ

/// A fresh abstract ipc endpoint: nothing on disk, nothing shared between tests.
func uniqueEndpoint() -> String { "ipc://@grove-test-\(UUID().uuidString)" }

func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

/// Polls `condition` until it holds: never a fixed sleep.
/// - Returns: `false` when `timeout` passed first; generous, since it only matters when failing.
func eventually(within timeout: Duration = .seconds(10), _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while !condition() {
        guard ContinuousClock.now < deadline else { return false }
        try? await Task.sleep(for: .milliseconds(5))
    }
    return true
}

/// Receives up to `count` messages on `socket` from a thread of its own, so that a blocking
/// receive (up to the socket's receive timeout each) never holds a thread of the test pool. The
/// caller leaves `socket` alone until this returns.
/// - Returns: The messages, fewer when one did not arrive within the receive timeout.
func receiveOnThread(_ count: Int, from socket: Socket) async throws -> [[[UInt8]]] {
    let handOver = HandOver(socket)
    return try await withCheckedThrowingContinuation { continuation in
        Thread {
            continuation.resume(with: Result {
                var messages: [[[UInt8]]] = []
                while messages.count < count, let message = try handOver.socket.receive(dontWait: false) { messages.append(message) }
                return messages
            })
        }.start()
    }
}

/// A socket passed to the one thread that uses it next, while its owner waits.
private struct HandOver: @unchecked Sendable {
    let socket: Socket
    init(_ socket: Socket) { self.socket = socket }
}

/// A socket with `LINGER` 0, so closing it never holds up its context.
func makeSocket(_ context: ZMQContext, _ type: SocketType) throws -> Socket {
    let socket = try Socket(context, type)
    try socket.setLinger(milliseconds: 0)
    return socket
}

/// A ROUTER with `ROUTER_MANDATORY`, bound to a fresh endpoint.
func makeRouter(_ context: ZMQContext, sendHighWaterMark: Int32 = 1000) throws -> (Socket, String) {
    let router = try makeSocket(context, .router)
    try router.setRouterMandatory(true)
    try router.setSendHighWaterMark(sendHighWaterMark)
    let endpoint = uniqueEndpoint()
    try router.bind(endpoint)
    return (router, endpoint)
}

/// A DEALER with a routing id, connected to `endpoint`.
func makeDealer(_ context: ZMQContext, id: String, endpoint: String) throws -> Socket {
    let dealer = try makeSocket(context, .dealer)
    try dealer.setRoutingID(bytes(id))
    try dealer.connect(endpoint)
    return dealer
}

/// A send failure as a delegate saw it.
struct Failure: Sendable {
    let socket: SocketID
    let frames: [[UInt8]]
    let error: ZMQError
}

/// A started loop over one socket whose delegate forwards posts and records what arrives.
struct LoopHarness {
    let loop: IOLoop
    let socket: SocketID
    let inbox = Recorder<Inbound>()
    let failures = Recorder<Failure>()
    let stops = Recorder<Bool>()

    init(name: String, socket: Socket) throws {
        loop = try IOLoop(name: name, tickInterval: .milliseconds(20))
        self.socket = loop.add(socket)
        let (inbox, failures, stops) = (inbox, failures, stops)
        loop.start(ForwardingDelegate(
            onBatch: { inbox.append(contentsOf: $0) },
            onSendFailure: { failures.append(Failure(socket: $0, frames: $1, error: $2)) },
            onStop: { stops.append(true) }
        ))
    }

    func send(_ frames: [[UInt8]]) { loop.post(Outbound(socket: socket, frames: frames)) }

    /// Asks the loop thread a question and waits for the answer.
    func ask<T: Sendable>(_ question: @escaping @Sendable (LoopIO) -> T) async -> T? {
        let answers = Recorder<T>()
        loop.execute { answers.append(question($0)) }
        guard await answers.wait(forCount: 1) else { return nil }
        return answers.items.first
    }
}

/// Echoes every message back to its sender (ROUTER side).
final class EchoDelegate: IOLoopDelegate {
    func received(_ batch: [Inbound], io: LoopIO) {
        for message in batch { io.send(message.socket, message.frames) }
    }
    func sendFailed(_ socket: SocketID, frames: [[UInt8]], error: ZMQError, io: LoopIO) {}
    func tick(io: LoopIO) {}
    func posted(_ messages: [Outbound], io: LoopIO) {}
}

/// Runs blocking work on its own thread; `true` when it finished within `timeout`.
func finishes(within timeout: Duration = .seconds(10), _ work: @escaping @Sendable () -> Void) async -> Bool {
    let done = Recorder<Bool>()
    Thread.detachNewThread {
        work()
        done.append(true)
    }
    return await done.wait(forCount: 1, within: timeout)
}

/// A loop's ROUTER (send high-water mark 1) and a DEALER "slow" that buffers one message and
/// reads only when told: what the loop sends it beyond that waits in the loop's outbox. The
/// slow peer has said hello, so the router knows it.
struct SlowPeer {
    let context: ZMQContext
    let server: LoopHarness
    let slow: Socket
    let endpoint: String

    init(name: String) throws {
        context = try ZMQContext()
        let router: Socket
        (router, endpoint) = try makeRouter(context, sendHighWaterMark: 1)
        server = try LoopHarness(name: name, socket: router)
        slow = try makeDealer(context, id: "slow", endpoint: endpoint)
        try slow.setReceiveHighWaterMark(1)
        try slow.setReceiveTimeout(milliseconds: 10_000)
        guard try slow.send([bytes("hello")], dontWait: false) else {
            throw ZMQError(errno: EAGAIN, operation: "send the slow peer's hello to \(endpoint)")
        }
    }
}
