internal import CZeroMQ

/// A failed libzmq call: the `errno` it reported, what we were doing, and what to do about it.
///
/// Equality compares the code only, so `error == ZMQError(errno: EAGAIN, operation: "")` asks
/// "was this EAGAIN?" whatever the operation was.
///
/// ```swift
/// do { try socket.bind("ipc://@grove") }
/// catch { print(error) }   // bind ipc://@grove: Address already in use — another socket …
/// ```
package struct ZMQError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The POSIX or libzmq error code, e.g. `EHOSTUNREACH`, `EAGAIN`, `EADDRINUSE`.
    package let errno: Int32
    /// What we were doing, e.g. `"bind ipc://@x"` or `"send to router peer 0x6162"`.
    package let operation: String

    /// Creates an error from a code and the operation that failed.
    /// - Parameters:
    ///   - errno: The error code, usually from `zmq_errno()`.
    ///   - operation: What was being done, naming the endpoint, option or peer involved.
    package init(errno: Int32, operation: String) {
        self.errno = errno
        self.operation = operation
    }

    /// libzmq's text for the code, followed by advice on what to do next when we have some.
    package var message: String {
        let text = String(cString: zmq_strerror(errno))
        guard let advice = Self.advice(for: errno) else { return text }
        return "\(text) — \(advice)"
    }

    /// `true` for `EHOSTUNREACH`: a ROUTER with `ROUTER_MANDATORY` does not know the peer (never
    /// connected, or gone).
    package var isPeerUnreachable: Bool { errno == EHOSTUNREACH }

    /// `true` for `EAGAIN`: the message could not be queued now (high-water mark or timeout).
    package var isWouldBlock: Bool { errno == EAGAIN }

    /// `"<operation>: <message> (errno N)"`.
    package var description: String { "\(operation): \(message) (errno \(errno))" }

    /// Compares the error codes only.
    package static func == (lhs: ZMQError, rhs: ZMQError) -> Bool { lhs.errno == rhs.errno }

    /// The error libzmq reported for the call that just failed on this thread.
    static func last(_ operation: @autoclosure () -> String) -> ZMQError {
        ZMQError(errno: zmq_errno(), operation: operation())
    }

    private static func advice(for code: Int32) -> String? {
        switch code {
        case EADDRINUSE:
            "another socket already bound this endpoint; choose another endpoint or stop the process holding it"
        case EHOSTUNREACH:
            "the peer is unknown or has disconnected; treat it as gone"
        case EAGAIN:
            "the peer is slow or absent (high-water mark or timeout reached); retry later or apply backpressure"
        case ETERM:
            "the context was terminated; close the socket"
        case ENOTSOCK:
            "the socket is already closed; create a new one"
        case EINVAL:
            "check the endpoint syntax (e.g. tcp://127.0.0.1:*, ipc:///run/user/1000/grove/default/clients) or the option value"
        case EPROTONOSUPPORT, ENOCOMPATPROTO:
            "the transport is not supported here; use tcp:// or ipc://"
        case EADDRNOTAVAIL, ENODEV:
            "the address is not a local interface; bind to 127.0.0.1 or *"
        case EMTHREAD:
            "no I/O thread available; create the context with more ioThreads"
        case EMSGSIZE:
            "the message exceeds the peer's maximum message size"
        default:
            nil
        }
    }
}
