import Glibc

/// The in-memory twin of ``IOLoop`` for tests (swift-nio's `EmbeddedEventLoop` and
/// `EmbeddedChannel` are the model): it drives the same ``IOLoopDelegate`` through the same
/// ``LoopIO``, on the caller's thread, with no socket, no thread and no wall clock.
///
/// The test plays the loop and every peer: it hands the delegate what arrived (``receive(_:)``),
/// moves time (``advance(by:)``, which ticks the delegate on the way as the real loop would), reads
/// what the delegate sent (``readOutbound(on:)``), and makes peers misbehave the way the real loop
/// reports it: a peer that does not read (``holdBack(_:on:)``) fills its outbox, which
/// `LoopIO.pending` counts; a peer that is gone (``disconnect(_:on:)``) makes sends to it fail
/// with `EHOSTUNREACH`, reported to ``IOLoopDelegate/sendFailed(_:frames:error:io:)`` once the
/// callback that sent returns. Each call is one loop turn and returns when the turn is over:
/// nothing happens in between, so a test is deterministic.
///
/// ```swift
/// let loop = EmbeddedLoop(tickInterval: .milliseconds(10))
/// let clients = loop.add(.router)
/// loop.start(delegate)
/// loop.receive([Inbound(socket: clients, frames: [client, header, address, payload])])
/// let sent = loop.readOutbound(on: clients)   // [[client, header, address, payload]]
/// loop.advance(by: .milliseconds(200))       // twenty ticks on the way
/// ```
package final class EmbeddedLoop {
    /// The loop's clock, as ``LoopIO/now`` reads it: it moves only with ``advance(by:)``.
    package private(set) var now: ContinuousClock.Instant
    /// How often ``advance(by:)`` ticks the delegate.
    package let tickInterval: Duration
    private var nextTick: ContinuousClock.Instant
    private var types: [SocketType] = []
    private(set) var outboxes: [Outbox] = []
    /// What was sent and not read yet, in send order.
    private var outbound: [Outbound] = []
    /// Peers (by socket) that take nothing: what is sent to them waits in the outbox.
    private var heldBack: [SocketID: Set<[UInt8]>] = [:]
    /// Peers (by socket) that are gone: sending to them fails.
    private var gone: [SocketID: Set<[UInt8]>] = [:]
    private var failures: [(SocketID, [[UInt8]], ZMQError)] = []
    private var delegate: (any IOLoopDelegate)?
    /// How often each socket was replaced (``LoopIO/replace(_:with:)``).
    package private(set) var replacements: [SocketID: Int] = [:]

    /// Creates a loop with no sockets; nothing is called until ``start(_:)``.
    /// - Parameters:
    ///   - tickInterval: The delegate's `tick` comes once per interval of ``advance(by:)``.
    ///   - now: Where the clock starts.
    package init(tickInterval: Duration = .milliseconds(50), now: ContinuousClock.Instant = .now) {
        precondition(tickInterval > .zero, "an EmbeddedLoop needs a positive tick interval")
        self.tickInterval = tickInterval
        self.now = now
        nextTick = now.advanced(by: tickInterval)
    }

    /// Adds a socket of `type`: a ROUTER keeps one outbox per peer (frame 0), others one each.
    /// - Parameter type: The socket type it stands in for.
    /// - Returns: The id the delegate sends with and the test receives on.
    package func add(_ type: SocketType) -> SocketID {
        types.append(type)
        outboxes.append(Outbox(keyedByPeer: type == .router))
        return types.count - 1
    }

    /// Hands the loop its delegate, kept until the loop is released.
    /// - Parameter delegate: Gets the callbacks, on the caller's thread, one call at a time.
    package func start(_ delegate: some IOLoopDelegate) {
        self.delegate = delegate
    }

    // MARK: Driving the delegate

    /// One turn in which `batch` arrived: `received`, failures reported, outboxes retried (and the
    /// delegate told when one shrank).
    /// - Parameter batch: The messages, in arrival order.
    package func receive(_ batch: [Inbound]) {
        guard !batch.isEmpty else { return }
        turn { $0.received(batch, io: $1) }
    }

    /// One turn in which other threads' messages arrived (`posted`).
    /// - Parameter messages: The messages, in posting order.
    package func post(_ messages: [Outbound]) {
        guard !messages.isEmpty else { return }
        turn { $0.posted(messages, io: $1) }
    }

    /// One turn running `body` on the loop, as ``IOLoop/execute(_:)`` does.
    /// - Parameter body: Work that needs the loop's sends or outboxes.
    package func execute(_ body: (LoopIO) -> Void) {
        body(LoopIO(embedded: self))
        finishTurn()
    }

    /// One turn with a tick and no time passing.
    package func tick() {
        turn { $0.tick(io: $1) }
    }

    /// Moves the clock by `duration`, ticking the delegate each time a tick is due on the way
    /// (each at its own instant), as the real loop ticks at least every ``tickInterval``.
    /// - Parameter duration: How far the clock moves; not negative.
    package func advance(by duration: Duration) {
        precondition(duration >= .zero, "time does not go back: advance(by: \(duration))")
        let deadline = now.advanced(by: duration)
        while nextTick <= deadline {
            now = nextTick
            nextTick = now.advanced(by: tickInterval)
            tick()
        }
        now = deadline
    }

    /// Calls the delegate, then does what the real loop does after each callback: reports failed
    /// sends, retries outboxes, reports what failed there.
    private func turn(_ callback: (any IOLoopDelegate, LoopIO) -> Void) {
        guard let delegate else { preconditionFailure("EmbeddedLoop: start(_:) it with a delegate first") }
        callback(delegate, LoopIO(embedded: self))
        finishTurn()
    }

    private func finishTurn() {
        reportFailures()
        retryOutboxes()
        reportFailures()
    }

    // MARK: Peers

    /// Makes `peer` stop reading: what is sent to it waits in its outbox from now on.
    /// - Parameters:
    ///   - peer: The peer's routing id (ignored, and the whole socket held back, unless a ROUTER).
    ///   - socket: The socket it is a peer of.
    package func holdBack(_ peer: [UInt8], on socket: SocketID) {
        heldBack[socket, default: []].insert(key(socket, peer))
    }

    /// Makes `peer` read again; its outbox drains in a turn run now.
    /// - Parameters:
    ///   - peer: The peer's routing id.
    ///   - socket: The socket it is a peer of.
    package func release(_ peer: [UInt8], on socket: SocketID) {
        heldBack[socket]?.remove(key(socket, peer))
        // It reads again: its queue is tried now, not after the pause a blocked queue waits.
        outboxes[socket].retrySoon(peer: key(socket, peer))
        finishTurn()
    }

    /// Makes `peer` gone: sending to it fails with `EHOSTUNREACH`, as on a ROUTER with
    /// `ROUTER_MANDATORY`, until ``reconnect(_:on:)``.
    /// - Parameters:
    ///   - peer: The peer's routing id.
    ///   - socket: The socket it was a peer of.
    package func disconnect(_ peer: [UInt8], on socket: SocketID) {
        gone[socket, default: []].insert(key(socket, peer))
    }

    /// Makes `peer` reachable again (a new connection under the same routing id).
    /// - Parameters:
    ///   - peer: The peer's routing id.
    ///   - socket: The socket it is a peer of.
    package func reconnect(_ peer: [UInt8], on socket: SocketID) {
        gone[socket]?.remove(key(socket, peer))
    }

    // MARK: What was sent

    /// Takes what was sent on `socket` and not read yet, in send order; frame 0 is the peer on a
    /// ROUTER, the topic on a publisher.
    /// - Parameter socket: The socket.
    /// - Returns: The messages' frames.
    package func readOutbound(on socket: SocketID) -> [[[UInt8]]] {
        var taken: [[[UInt8]]] = []
        outbound.removeAll { message in
            guard message.socket == socket else { return false }
            taken.append(message.frames)
            return true
        }
        return taken
    }

    /// Takes everything sent and not read yet, in send order across sockets.
    /// - Returns: The messages.
    package func readOutbound() -> [Outbound] {
        defer { outbound.removeAll() }
        return outbound
    }

    // MARK: LoopIO's side

    func send(_ socket: SocketID, _ frames: [[UInt8]]) {
        precondition(types.indices.contains(socket), "unknown SocketID \(socket) in an EmbeddedLoop")
        if outboxes[socket].isBlocked(for: frames) {
            outboxes[socket].enqueue(frames)
            return
        }
        switch attempt(socket, frames) {
        case .sent: break
        case .wouldBlock: outboxes[socket].enqueue(frames)
        case .failed(let error): failures.append((socket, frames, error))
        }
    }

    /// Messages waiting in `socket`'s outboxes, as ``LoopIO/pending(_:)`` counts them.
    /// - Parameter socket: The socket.
    /// - Returns: The number of queued messages.
    package func pending(_ socket: SocketID) -> Int { outboxes[socket].count }

    /// Messages waiting for `peer`, as ``LoopIO/pending(_:peer:)`` counts them.
    /// - Parameters:
    ///   - socket: The socket.
    ///   - peer: The peer's routing id.
    /// - Returns: The number of queued messages.
    package func pending(_ socket: SocketID, peer: [UInt8]) -> Int { outboxes[socket].pending(peer: peer) }

    /// What waits for `peer`, as ``LoopIO/backlog(_:peer:)`` counts it.
    /// - Parameters:
    ///   - socket: The socket.
    ///   - peer: The peer's routing id.
    /// - Returns: The messages and bytes queued.
    package func backlog(_ socket: SocketID, peer: [UInt8]) -> Backlog { outboxes[socket].backlog(peer: peer) }

    func dropPending(_ socket: SocketID, peer: [UInt8]) -> [[[UInt8]]] { outboxes[socket].drop(peer: peer) }

    /// As the real loop: the old socket's outbox goes; the replacement is closed at once, as
    /// nothing is sent on it here.
    func replace(_ socket: SocketID, with replacement: Socket) {
        precondition(types.indices.contains(socket), "unknown SocketID \(socket) in an EmbeddedLoop")
        replacement.close()
        outboxes[socket] = Outbox(keyedByPeer: types[socket] == .router)
        replacements[socket, default: 0] += 1
    }

    private func attempt(_ socket: SocketID, _ frames: [[UInt8]]) -> SendAttempt {
        guard let first = frames.first else {
            return .failed(ZMQError(errno: EINVAL, operation: "send an empty message (it needs at least one frame)"))
        }
        let peer = key(socket, first)
        if gone[socket]?.contains(peer) == true {
            return .failed(ZMQError(errno: EHOSTUNREACH, operation: "send to router peer \(peerDescription(first))"))
        }
        if heldBack[socket]?.contains(peer) == true { return .wouldBlock }
        outbound.append(Outbound(socket: socket, frames: frames))
        return .sent
    }

    private func retryOutboxes() {
        for id in outboxes.indices where !outboxes[id].isEmpty {
            let before = outboxes[id].count
            let failed = outboxes[id].retry(now: now) { frames in attempt(id, frames.map { Array($0) }) }
            failures.append(contentsOf: failed.map { (id, $0.0, $0.1) })
            if outboxes[id].count < before, let delegate { delegate.drained(id, io: LoopIO(embedded: self)) }
        }
    }

    /// Reports failures until none are left (a `sendFailed` handler may send and fail again).
    private func reportFailures() {
        while !failures.isEmpty, let delegate {
            let batch = failures
            failures.removeAll()
            for (socket, frames, error) in batch {
                delegate.sendFailed(socket, frames: frames, error: error, io: LoopIO(embedded: self))
            }
        }
    }

    /// The outbox key of a message to `peer`: the peer on a ROUTER, one key for other sockets.
    private func key(_ socket: SocketID, _ peer: [UInt8]) -> [UInt8] {
        types[socket] == .router ? peer : []
    }
}

@available(*, unavailable, message: "an EmbeddedLoop is used by one thread, the test's")
extension EmbeddedLoop: Sendable {}
