internal import CZeroMQ
import Synchronization

/// A libzmq context: the I/O threads behind every socket made from it. Thread-safe, as libzmq's is.
///
/// Sockets keep their context alive. `terminate()` blocks until every socket made from the context
/// is closed and their `LINGER` has expired, so set `LINGER` on every socket and close them first.
///
/// ```swift
/// let context = try ZMQContext()
/// let socket = try Socket(context, .dealer)
/// try socket.setLinger(milliseconds: 0)
/// socket.close()
/// context.terminate()
/// ```
package final class ZMQContext: @unchecked Sendable {
    let handle: UnsafeMutableRawPointer
    private let terminated = Mutex(false)

    /// Creates a context.
    /// - Parameter ioThreads: libzmq background I/O threads; one is plenty below ~1 GB/s.
    /// - Throws: `ZMQError` when libzmq cannot create the context or set the thread count.
    package init(ioThreads: Int = 1) throws(ZMQError) {
        guard let handle = zmq_ctx_new() else { throw ZMQError.last("create context") }
        if zmq_ctx_set(handle, ZMQ_IO_THREADS, Int32(clamping: ioThreads)) != 0 {
            let error = ZMQError.last("set ZMQ_IO_THREADS \(ioThreads)")
            zmq_ctx_term(handle)
            throw error
        }
        self.handle = handle
    }

    deinit { terminate() }

    /// Terminates the context. Idempotent; concurrent callers wait for the first to finish.
    ///
    /// Blocks until all sockets of this context are closed and their queued messages are sent or
    /// their `LINGER` expired.
    package func terminate() {
        terminated.withLock { done in
            guard !done else { return }
            done = true
            while zmq_ctx_term(handle) != 0 && zmq_errno() == EINTR {}
        }
    }
}
