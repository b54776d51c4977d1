internal import CZeroMQ
import Glibc
import Synchronization

/// The bytes of large frames a ROUTER handed to libzmq, per peer, until libzmq lets them go.
///
/// ZeroMQ's queue in front of each peer counts messages (`ZMQ_SNDHWM`), not bytes, and says
/// nothing of what it holds. A frame over ``threshold`` bytes is therefore handed over as
/// memory of our own (`zmq_msg_init_data`), counted here until libzmq frees it: once its I/O
/// thread has written it to the connection, or dropped it with the connection. A peer that
/// reads keeps its count near zero; one that stops reading at the connection holds at most what
/// the caller lets it (the coordinator answers `busy` and `reply-dropped` past
/// `queues.clientOutboxBytes`, counting these bytes with its outbox). Small frames are not
/// counted: their number is bounded by the high-water mark and their size by `threshold`.
///
/// Touched by the loop thread (``add(peer:bytes:)``, ``bytes(peer:)``) and by libzmq's I/O
/// thread (the release), hence the lock; ``bytes(peer:)`` takes it only while something is held.
package final class HeldBytes: Sendable {
    /// Frames larger than this are counted.
    package let threshold: Int
    private let byPeer = Mutex<[[UInt8]: Int]>([:])
    /// Every peer's together: lets ``bytes(peer:)`` skip the lock while nothing is held.
    private let total = Atomic<Int>(0)

    /// - Parameter threshold: Frames larger than this many bytes are counted.
    package init(threshold: Int) {
        self.threshold = threshold
    }

    /// What libzmq still holds of the large frames sent to `peer`.
    package func bytes(peer: [UInt8]) -> Int {
        guard total.load(ordering: .acquiring) > 0 else { return 0 }
        return byPeer.withLock { $0[peer] ?? 0 }
    }

    /// What libzmq still holds for every peer.
    package var allBytes: Int { total.load(ordering: .acquiring) }

    func add(peer: [UInt8], bytes: Int) {
        byPeer.withLock { $0[peer, default: 0] += bytes }
        total.add(bytes, ordering: .releasing)
    }

    func release(peer: [UInt8], bytes: Int) {
        total.subtract(bytes, ordering: .releasing)
        byPeer.withLock { counts in
            let left = (counts[peer] ?? 0) - bytes
            counts[peer] = left > 0 ? left : nil
        }
    }
}

/// What libzmq's free callback needs to uncount one frame.
private final class HeldFrame {
    let held: HeldBytes
    let peer: [UInt8]
    let bytes: Int

    init(held: HeldBytes, peer: [UInt8], bytes: Int) {
        self.held = held
        self.peer = peer
        self.bytes = bytes
    }
}

/// Called by libzmq, on whichever thread drops the message's last reference, with the memory
/// handed to it and the frame's ``HeldFrame``.
private func releaseHeldFrame(_ data: UnsafeMutableRawPointer?, _ hint: UnsafeMutableRawPointer?) {
    free(data)
    guard let hint else { return }
    let frame = Unmanaged<HeldFrame>.fromOpaque(hint).takeRetainedValue()
    frame.held.release(peer: frame.peer, bytes: frame.bytes)
}

extension Socket {
    /// Sends `frame`, not the message's first, as memory of our own counted in `held` under
    /// `peer` until libzmq frees it. Past the first frame libzmq does not refuse for lack of
    /// room; should it ever, the send waits rather than leave half a message queued.
    func sendCounted(_ frame: UnsafeRawBufferPointer, last: Bool, dontWait: Bool, peer: [UInt8], held: HeldBytes,
                     handle: UnsafeMutableRawPointer, operation: @autoclosure () -> String) throws(ZMQError) {
        guard let copy = malloc(max(frame.count, 1)) else {
            throw ZMQError(errno: ENOMEM, operation: operation())
        }
        if let base = frame.baseAddress { copy.copyMemory(from: base, byteCount: frame.count) }
        let hint = Unmanaged.passRetained(HeldFrame(held: held, peer: peer, bytes: frame.count)).toOpaque()
        var message = zmq_msg_t()
        // Counted before libzmq can free it, so the release never comes first.
        held.add(peer: peer, bytes: frame.count)
        guard zmq_msg_init_data(&message, copy, frame.count, releaseHeldFrame, hint) == 0 else {
            let error = ZMQError.last(operation())
            releaseHeldFrame(copy, hint)
            throw error
        }
        var flags = (dontWait ? ZMQ_DONTWAIT : 0) | (last ? 0 : ZMQ_SNDMORE)
        while zmq_msg_send(&message, handle, flags) < 0 {
            let code = zmq_errno()
            if code == EINTR { continue }
            if code == EAGAIN, flags & ZMQ_DONTWAIT != 0 {
                flags &= ~ZMQ_DONTWAIT
                continue
            }
            // Still ours: closing it frees the copy and uncounts it.
            zmq_msg_close(&message)
            throw ZMQError(errno: code, operation: operation())
        }
    }
}
