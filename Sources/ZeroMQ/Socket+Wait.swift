internal import CZeroMQ

extension Socket {
    /// Waits until a message can be received or `timeout` passes, with sub-millisecond
    /// precision (`zmq_poll` counts whole milliseconds): through the socket's `ZMQ_FD`, which
    /// signals changes, and `ZMQ_EVENTS`, which says what is ready.
    /// - Parameter timeout: How long to wait at most; zero only checks.
    /// - Returns: Whether a message is ready.
    /// - Throws: `ZMQError` when the socket is closed.
    package func waitUntilReadable(timeout: Duration) throws(ZMQError) -> Bool {
        let handle = try open("wait on \(type)")
        if try events(handle) & ZMQ_POLLIN != 0 { return true }
        var descriptor: Int32 = -1
        var size = MemoryLayout<Int32>.size
        guard zmq_getsockopt(handle, ZMQ_FD, &descriptor, &size) == 0 else { throw ZMQError.last("get ZMQ_FD") }
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        while true {
            let remaining = clock.now.duration(to: deadline)
            guard remaining > .zero else { return false }
            let (seconds, attoseconds) = remaining.components
            _ = grove_wait_readable(descriptor, max(1, seconds * 1_000_000 + attoseconds / 1_000_000_000_000))
            // The descriptor is edge-triggered and also signals sends: ZMQ_EVENTS decides.
            if try events(handle) & ZMQ_POLLIN != 0 { return true }
        }
    }

    private func events(_ handle: UnsafeMutableRawPointer) throws(ZMQError) -> Int32 {
        var events: Int32 = 0
        var size = MemoryLayout<Int32>.size
        guard zmq_getsockopt(handle, ZMQ_EVENTS, &events, &size) == 0 else { throw ZMQError.last("get ZMQ_EVENTS") }
        return events
    }
}
