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
        // The descriptor is edge-triggered and also signals sends: ZMQ_EVENTS decides.
        return try Self.sleep(upTo: timeout, { _ = grove_wait_readable(descriptor, $0) }, until: { () throws(ZMQError) in
            try events(handle) & ZMQ_POLLIN != 0
        })
    }

    /// Waits until a message can be received on any of `sockets` or `timeout` passes, as
    /// ``waitUntilReadable(timeout:)`` does for one: a client thread that drives several sockets
    /// (one per worker on the direct road) sleeps once for all of them.
    /// - Returns: Whether a message is ready on one of them.
    /// - Throws: `ZMQError` when a socket is closed.
    package static func waitUntilAnyReadable(_ sockets: [Socket], timeout: Duration) throws(ZMQError) -> Bool {
        if sockets.count == 1 { return try sockets[0].waitUntilReadable(timeout: timeout) }
        var handles: [UnsafeMutableRawPointer] = []
        var descriptors: [Int32] = []
        for socket in sockets {
            let handle = try socket.open("wait on \(socket.type)")
            if try socket.events(handle) & ZMQ_POLLIN != 0 { return true }
            var descriptor: Int32 = -1
            var size = MemoryLayout<Int32>.size
            guard zmq_getsockopt(handle, ZMQ_FD, &descriptor, &size) == 0 else { throw ZMQError.last("get ZMQ_FD") }
            handles.append(handle)
            descriptors.append(descriptor)
        }
        return try sleep(upTo: timeout, { _ = grove_wait_any_readable(descriptors, Int32(descriptors.count), $0) }, until: { () throws(ZMQError) in
            for (socket, handle) in zip(sockets, handles) where try socket.events(handle) & ZMQ_POLLIN != 0 { return true }
            return false
        })
    }

    /// Sleeps in `wait` (given the microseconds left, at least 1) until `ready` says so or
    /// `timeout` passes.
    /// - Returns: Whether `ready` said so in time.
    private static func sleep(upTo timeout: Duration, _ wait: (Int64) -> Void, until ready: () throws(ZMQError) -> Bool) throws(ZMQError) -> Bool {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        while true {
            let remaining = clock.now.duration(to: deadline)
            guard remaining > .zero else { return false }
            let (seconds, attoseconds) = remaining.components
            wait(max(1, seconds * 1_000_000 + attoseconds / 1_000_000_000_000))
            if try ready() { return true }
        }
    }

    private func events(_ handle: UnsafeMutableRawPointer) throws(ZMQError) -> Int32 {
        var events: Int32 = 0
        var size = MemoryLayout<Int32>.size
        guard zmq_getsockopt(handle, ZMQ_EVENTS, &events, &size) == 0 else { throw ZMQError.last("get ZMQ_EVENTS") }
        return events
    }
}
