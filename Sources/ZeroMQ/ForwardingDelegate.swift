/// A delegate that sends every posted message as is and hands every received batch to a closure.
/// Enough for clients and workers, whose logic lives outside the loop thread.
///
/// ```swift
/// let (batches, continuation) = AsyncStream.makeStream(of: [Inbound].self)
/// loop.start(ForwardingDelegate(onBatch: { continuation.yield($0) }, onStop: { continuation.finish() }))
/// ```
package final class ForwardingDelegate: IOLoopDelegate {
    private let onBatch: @Sendable ([Inbound]) -> Void
    private let onSendFailure: @Sendable (SocketID, [[UInt8]], ZMQError) -> Void
    private let onTick: @Sendable (ContinuousClock.Instant) -> Void
    private let onStop: @Sendable () -> Void

    /// Creates a forwarding delegate. The closures run on the loop thread and must not block.
    /// - Parameters:
    ///   - onBatch: Every received batch.
    ///   - onSendFailure: Messages that failed for a reason other than lack of room.
    ///   - onTick: Every tick, with the current time.
    ///   - onStop: Once, when the loop ends.
    package init(
        onBatch: @escaping @Sendable ([Inbound]) -> Void,
        onSendFailure: @escaping @Sendable (SocketID, [[UInt8]], ZMQError) -> Void = { _, _, _ in },
        onTick: @escaping @Sendable (ContinuousClock.Instant) -> Void = { _ in },
        onStop: @escaping @Sendable () -> Void = {}
    ) {
        self.onBatch = onBatch
        self.onSendFailure = onSendFailure
        self.onTick = onTick
        self.onStop = onStop
    }

    /// Passes the batch to `onBatch`.
    package func received(_ batch: [Inbound], io: LoopIO) { onBatch(batch) }

    /// Passes the failure to `onSendFailure`.
    package func sendFailed(_ socket: SocketID, frames: [[UInt8]], error: ZMQError, io: LoopIO) {
        onSendFailure(socket, frames, error)
    }

    /// Calls `onTick`.
    package func tick(io: LoopIO) { onTick(io.now) }

    /// Sends each message on its socket.
    package func posted(_ messages: [Outbound], io: LoopIO) {
        for message in messages { io.send(message.socket, message.frames) }
    }

    /// Calls `onStop`.
    package func stopping(io: LoopIO) { onStop() }
}
