/// Identifies a socket inside one `IOLoop`: the value `IOLoop.add(_:)` returned.
package typealias SocketID = Int

/// A message the loop received on one of its sockets.
package struct Inbound: Sendable {
    /// The socket it arrived on.
    package let socket: SocketID
    /// The frames; on a ROUTER frame 0 is the sender's routing id.
    package let frames: [[UInt8]]
    /// The `User-Id` the ZAP handler gave the sender's connection, on a socket that
    /// ``Socket/readsUserID``; `nil` otherwise.
    package let userID: String?
    /// How many frames the message had, routing id included: more than `frames.count` when the
    /// socket dropped those past its ``Socket/maximumFrames`` unread.
    package let frameCount: Int

    /// Creates an inbound message.
    /// - Parameters:
    ///   - socket: The socket it arrived on.
    ///   - frames: Its frames.
    ///   - userID: The sender's ZAP user id, when the socket reads it.
    ///   - frameCount: How many frames it had, those dropped included; `nil`: `frames.count`.
    package init(socket: SocketID, frames: [[UInt8]], userID: String? = nil, frameCount: Int? = nil) {
        self.socket = socket
        self.frames = frames
        self.userID = userID
        self.frameCount = frameCount ?? frames.count
    }
}

/// A message another thread hands to the loop with `IOLoop.post(_:)`.
package struct Outbound: Sendable {
    /// The socket it is meant for.
    package let socket: SocketID
    /// The frames; on a ROUTER frame 0 is the recipient's routing id.
    package let frames: [[UInt8]]

    /// Creates an outbound message.
    /// - Parameters:
    ///   - socket: The socket it is meant for.
    ///   - frames: Its frames, at least one.
    package init(socket: SocketID, frames: [[UInt8]]) {
        self.socket = socket
        self.frames = frames
    }
}

/// What an `IOLoop` calls, always on its own thread, one call at a time.
///
/// Callbacks must not block: every socket of the process waits for them to return.
package protocol IOLoopDelegate: AnyObject {
    /// Everything received in one loop iteration (at most `IOLoop.maxBatch` messages), in
    /// arrival order per socket.
    /// - Parameters:
    ///   - batch: The messages.
    ///   - io: Sends and outbox queries, valid during this call.
    func received(_ batch: [Inbound], io: LoopIO)

    /// A message could not be sent for a reason other than lack of room, e.g. `EHOSTUNREACH`
    /// when a ROUTER peer is unknown or gone. Called after the callback that sent it returns,
    /// before the loop polls again.
    /// - Parameters:
    ///   - socket: The socket it was sent on.
    ///   - frames: The message.
    ///   - error: Why it failed.
    ///   - io: Sends and outbox queries, valid during this call.
    func sendFailed(_ socket: SocketID, frames: [[UInt8]], error: ZMQError, io: LoopIO)

    /// Called at least every `tickInterval` (later when a callback overruns), for timers.
    /// - Parameter io: Sends and outbox queries, valid during this call.
    func tick(io: LoopIO)

    /// Messages other threads posted with `IOLoop.post`, in posting order. The delegate decides
    /// what to send.
    /// - Parameters:
    ///   - messages: The posted messages.
    ///   - io: Sends and outbox queries, valid during this call.
    func posted(_ messages: [Outbound], io: LoopIO)

    /// Messages waiting in `socket`'s outboxes left in this iteration (a slow peer read): room
    /// again for what was held back for it. Called after the outboxes are retried, before the
    /// loop polls again. Defaults to doing nothing.
    /// - Parameters:
    ///   - socket: The socket whose outboxes shrank.
    ///   - io: Sends and outbox queries, valid during this call.
    func drained(_ socket: SocketID, io: LoopIO)

    /// The loop is ending: last chance to send (the sockets close right after, `LINGER` applies).
    /// Defaults to doing nothing.
    /// - Parameter io: Sends and outbox queries, valid during this call.
    func stopping(io: LoopIO)
}

extension IOLoopDelegate {
    /// Does nothing.
    package func drained(_ socket: SocketID, io: LoopIO) {}

    /// Does nothing.
    package func stopping(io: LoopIO) {}
}
