/// The loop's side of a delegate callback: send, inspect and drop outboxes.
///
/// Valid only inside delegate callbacks (and `IOLoop.execute` closures), on the loop thread.
/// Backed by an ``IOLoop``'s sockets, or by an ``EmbeddedLoop`` in tests: one enum of two class
/// references (a word, as the loop core alone was), so a send pays one switch, never an
/// existential or an allocation.
package struct LoopIO {
    enum Backend {
        case sockets(LoopCore)
        case embedded(EmbeddedLoop)
    }

    let backend: Backend

    init(core: LoopCore) {
        backend = .sockets(core)
    }

    init(embedded: EmbeddedLoop) {
        backend = .embedded(embedded)
    }

    /// Sends without blocking.
    ///
    /// When the socket has no room (`EAGAIN`) the message waits in an outbox and is retried, in
    /// order, every loop iteration. A ROUTER keeps one outbox per peer (keyed by frame 0), so one
    /// slow peer does not hold up the others; other sockets keep one outbox each. While an outbox
    /// is non-empty, later messages for it queue behind it, preserving order.
    ///
    /// Other failures (e.g. `EHOSTUNREACH`, or an empty message) are reported to
    /// `IOLoopDelegate.sendFailed` after the current callback returns, before the next poll.
    /// - Parameters:
    ///   - socket: The socket to send on.
    ///   - frames: The message; on a ROUTER frame 0 is the peer's routing id.
    package func send(_ socket: SocketID, _ frames: [[UInt8]]) {
        switch backend {
        case .sockets(let core): core.send(socket, frames)
        case .embedded(let loop): loop.send(socket, frames)
        }
    }

    /// Sends `peer` followed by three frames read from borrowed memory, as ``send(_:_:)`` does
    /// with `[peer, first, second, third]`, but making no arrays: a message that must wait is
    /// copied into its peer's queue, and only one reported as failed becomes arrays. A router
    /// answering one message at a time makes no arrays of its own per message.
    /// - Parameters:
    ///   - socket: The socket to send on.
    ///   - peer: Frame 0: on a ROUTER, the peer's routing id.
    ///   - first: The next frame; valid only during the call, as are `second` and `third`.
    package func send(_ socket: SocketID, peer: [UInt8], _ first: UnsafeRawBufferPointer, _ second: UnsafeRawBufferPointer,
                     _ third: UnsafeRawBufferPointer) {
        switch backend {
        case .sockets(let core):
            core.send(socket, peer: peer, first, second, third)
        case .embedded(let loop):
            loop.send(socket, [peer, Array(first), Array(second), Array(third)])
        }
    }

    /// Messages waiting in `socket`'s outboxes, all peers together.
    /// - Parameter socket: The socket.
    /// - Returns: The number of queued messages.
    package func pending(_ socket: SocketID) -> Int {
        switch backend {
        case .sockets(let core): core.outboxes[socket].count
        case .embedded(let loop): loop.pending(socket)
        }
    }

    /// Messages waiting for one ROUTER peer. For other socket types `peer` is ignored and the
    /// socket's single outbox is counted.
    /// - Parameters:
    ///   - socket: The socket.
    ///   - peer: The peer's routing id.
    /// - Returns: The number of queued messages.
    package func pending(_ socket: SocketID, peer: [UInt8]) -> Int {
        switch backend {
        case .sockets(let core): core.outboxes[socket].pending(peer: peer)
        case .embedded(let loop): loop.pending(socket, peer: peer)
        }
    }

    /// The messages and bytes waiting for one ROUTER peer (for other socket types `peer` is
    /// ignored): one lookup for both, free when nothing waits for anyone on the socket. The
    /// bytes include what libzmq still holds of large frames sent to the peer when the socket
    /// counts them (``Socket/heldBytes``); the messages are the outbox's only.
    /// - Parameters:
    ///   - socket: The socket.
    ///   - peer: The peer's routing id.
    /// - Returns: What waits, counted as frames' bytes (frame 0 included).
    package func backlog(_ socket: SocketID, peer: [UInt8]) -> Backlog {
        switch backend {
        case .sockets(let core):
            // What libzmq still holds of large frames sent to the peer waits for it too.
            var waiting = core.outboxes[socket].backlog(peer: peer)
            waiting.bytes += core.sockets[socket].heldBytes?.bytes(peer: peer) ?? 0
            return waiting
        case .embedded(let loop): return loop.backlog(socket, peer: peer)
        }
    }

    /// Drops the messages waiting for one peer, e.g. when it is declared lost. For other socket
    /// types than ROUTER `peer` is ignored and the socket's outbox is emptied.
    /// - Parameters:
    ///   - socket: The socket.
    ///   - peer: The peer's routing id.
    /// - Returns: The dropped messages, oldest first.
    @discardableResult
    package func dropPending(_ socket: SocketID, peer: [UInt8]) -> [[[UInt8]]] {
        switch backend {
        case .sockets(let core): core.outboxes[socket].drop(peer: peer)
        case .embedded(let loop): loop.dropPending(socket, peer: peer)
        }
    }

    /// The socket behind `socket`, for control operations such as `connect` on the loop thread.
    /// Do not send or receive on it directly, and do not keep it. An ``EmbeddedLoop`` has none:
    /// asking it is a programming error.
    /// - Parameter socket: The socket id.
    /// - Returns: The socket.
    package func socket(_ socket: SocketID) -> Socket {
        switch backend {
        case .sockets(let core): core.sockets[socket]
        case .embedded: preconditionFailure("an EmbeddedLoop has no sockets: SocketID \(socket) stands for one in tests")
        }
    }

    /// Closes a socket and puts another in its place under the same id, e.g. a DEALER whose peer
    /// went silent: a fresh socket drops what the old one had queued for that peer (the zguide's
    /// Paranoid Pirate worker does this). The old socket's outbox is dropped too; what is sent
    /// from now on goes to `replacement`.
    /// - Parameters:
    ///   - socket: The id of the socket to replace.
    ///   - replacement: A configured (bound or connected) socket; the loop now owns it.
    public func replace(_ socket: SocketID, with replacement: Socket) {
        switch backend {
        case .sockets(let core): core.replace(socket, with: replacement)
        case .embedded(let loop): loop.replace(socket, with: replacement)
        }
    }

    /// The current time: the wall clock's, or an ``EmbeddedLoop``'s own, which moves only when
    /// the test says.
    package var now: ContinuousClock.Instant {
        switch backend {
        case .sockets: .now
        case .embedded(let loop): loop.now
        }
    }
}

@available(*, unavailable, message: "LoopIO is valid only on the loop thread")
extension LoopIO: Sendable {}
