internal import CZeroMQ

extension Socket {
    /// `ZMQ_LINGER`: how long unsent messages are kept after `close()`. Set it on every socket:
    /// the default (-1, forever) makes `ZMQContext.terminate()` hang.
    /// - Parameter milliseconds: 0 drops at once; -1 waits forever.
    /// - Throws: `ZMQError` when the socket is closed.
    package func setLinger(milliseconds: Int32) throws(ZMQError) {
        try set(ZMQ_LINGER, milliseconds, "ZMQ_LINGER")
    }

    /// `ZMQ_SNDHWM`: messages queued per peer before sends block or fail with `EAGAIN`.
    /// - Parameter messages: The limit; 0 means none. Set before `bind`/`connect`.
    /// - Throws: `ZMQError` when the socket is closed or the value is invalid.
    package func setSendHighWaterMark(_ messages: Int32) throws(ZMQError) {
        try set(ZMQ_SNDHWM, messages, "ZMQ_SNDHWM")
    }

    /// `ZMQ_RCVHWM`: messages queued per peer on the receiving side.
    /// - Parameter messages: The limit; 0 means none. Set before `bind`/`connect`.
    /// - Throws: `ZMQError` when the socket is closed or the value is invalid.
    package func setReceiveHighWaterMark(_ messages: Int32) throws(ZMQError) {
        try set(ZMQ_RCVHWM, messages, "ZMQ_RCVHWM")
    }

    /// `ZMQ_ROUTER_MANDATORY`: a ROUTER reports `EHOSTUNREACH` for unknown peers and `EAGAIN` at
    /// the high-water mark instead of silently dropping.
    /// - Parameter on: Whether to report.
    /// - Throws: `ZMQError`, e.g. `EINVAL` on a socket that is not a ROUTER.
    package func setRouterMandatory(_ on: Bool) throws(ZMQError) {
        try set(ZMQ_ROUTER_MANDATORY, on ? 1 : 0, "ZMQ_ROUTER_MANDATORY")
    }

    /// `ZMQ_ROUTER_HANDOVER`: a new peer with a routing id already in use takes it over.
    /// - Parameter on: Whether to hand over.
    /// - Throws: `ZMQError`, e.g. `EINVAL` on a socket that is not a ROUTER.
    package func setRouterHandover(_ on: Bool) throws(ZMQError) {
        try set(ZMQ_ROUTER_HANDOVER, on ? 1 : 0, "ZMQ_ROUTER_HANDOVER")
    }

    /// `ZMQ_IMMEDIATE`: queue messages only to completed connections, so sending with no peer
    /// fails (`EAGAIN`) instead of queueing forever.
    /// - Parameter on: Whether to queue only to completed connections.
    /// - Throws: `ZMQError` when the socket is closed.
    package func setImmediate(_ on: Bool) throws(ZMQError) {
        try set(ZMQ_IMMEDIATE, on ? 1 : 0, "ZMQ_IMMEDIATE")
    }

    /// `ZMQ_SNDTIMEO`: how long a blocking `send` waits before returning `false`.
    /// - Parameter milliseconds: -1 waits forever.
    /// - Throws: `ZMQError` when the socket is closed.
    package func setSendTimeout(milliseconds: Int32) throws(ZMQError) {
        try set(ZMQ_SNDTIMEO, milliseconds, "ZMQ_SNDTIMEO")
    }

    /// `ZMQ_RCVTIMEO`: how long a blocking `receive` waits before returning `nil`.
    /// - Parameter milliseconds: -1 waits forever.
    /// - Throws: `ZMQError` when the socket is closed.
    package func setReceiveTimeout(milliseconds: Int32) throws(ZMQError) {
        try set(ZMQ_RCVTIMEO, milliseconds, "ZMQ_RCVTIMEO")
    }

    /// `ZMQ_TCP_MAXRT` (Linux's `TCP_USER_TIMEOUT`): how long sent data may stay unacknowledged,
    /// a peer that stopped reading included, before the connection is reset.
    package func setTCPMaximumRetransmit(milliseconds: Int32) throws(ZMQError) {
        try set(ZMQ_TCP_MAXRT, milliseconds, "ZMQ_TCP_MAXRT")
    }

    /// `ZMQ_ROUTING_ID`: the id a ROUTER peer sees as frame 0. Set before `connect`.
    /// - Parameter id: 1–255 bytes, not starting with a zero byte.
    /// - Throws: `ZMQError`, e.g. `EINVAL` for an empty or too long id.
    package func setRoutingID(_ id: [UInt8]) throws(ZMQError) {
        try set(ZMQ_ROUTING_ID, bytes: id, "ZMQ_ROUTING_ID \(peerDescription(id))")
    }

    /// ZMTP heartbeats, which detect a hung peer (~0.8 s at 200/600 ms).
    /// - Parameters:
    ///   - interval: `ZMQ_HEARTBEAT_IVL`, ms between pings; 0 disables.
    ///   - timeout: `ZMQ_HEARTBEAT_TIMEOUT`, ms without traffic before the connection is dropped.
    ///   - ttl: `ZMQ_HEARTBEAT_TTL`, ms the remote peer waits for our pings (rounded to 100 ms).
    /// - Throws: `ZMQError` when the socket is closed or a value is out of range.
    package func setHeartbeat(interval: Int32, timeout: Int32, ttl: Int32) throws(ZMQError) {
        try set(ZMQ_HEARTBEAT_IVL, interval, "ZMQ_HEARTBEAT_IVL")
        try set(ZMQ_HEARTBEAT_TIMEOUT, timeout, "ZMQ_HEARTBEAT_TIMEOUT")
        try set(ZMQ_HEARTBEAT_TTL, ttl, "ZMQ_HEARTBEAT_TTL")
    }

    /// `ZMQ_MAXMSGSIZE`: peers sending a larger message are disconnected.
    /// - Parameter bytes: The limit; -1 means none.
    /// - Throws: `ZMQError` when the socket is closed.
    package func setMaxMessageSize(_ bytes: Int64) throws(ZMQError) {
        var value = bytes
        let handle = try open("set ZMQ_MAXMSGSIZE \(bytes)")
        if zmq_setsockopt(handle, ZMQ_MAXMSGSIZE, &value, MemoryLayout<Int64>.size) != 0 {
            throw ZMQError.last("set ZMQ_MAXMSGSIZE \(bytes)")
        }
    }

    /// `ZMQ_RECONNECT_IVL`: the pause before reconnecting to a lost peer.
    /// - Parameter milliseconds: -1 disables reconnection.
    /// - Throws: `ZMQError` when the socket is closed.
    package func setReconnectInterval(milliseconds: Int32) throws(ZMQError) {
        try set(ZMQ_RECONNECT_IVL, milliseconds, "ZMQ_RECONNECT_IVL")
    }

    /// `ZMQ_SUBSCRIBE` on a SUB socket: receive messages whose first frame starts with `prefix`.
    /// - Parameter prefix: The prefix; empty subscribes to everything.
    /// - Throws: `ZMQError`, e.g. `EINVAL` on a socket that is not a SUB.
    package func subscribe(_ prefix: [UInt8]) throws(ZMQError) {
        try set(ZMQ_SUBSCRIBE, bytes: prefix, "ZMQ_SUBSCRIBE \(peerDescription(prefix))")
    }

    /// `ZMQ_UNSUBSCRIBE` on a SUB socket: undoes one `subscribe(_:)` of the same prefix.
    /// - Parameter prefix: The prefix given to `subscribe(_:)`.
    /// - Throws: `ZMQError`, e.g. `EINVAL` on a socket that is not a SUB.
    package func unsubscribe(_ prefix: [UInt8]) throws(ZMQError) {
        try set(ZMQ_UNSUBSCRIBE, bytes: prefix, "ZMQ_UNSUBSCRIBE \(peerDescription(prefix))")
    }

    private func set(_ option: Int32, _ value: Int32, _ name: String) throws(ZMQError) {
        var value = value
        let handle = try open("set \(name) \(value)")
        if zmq_setsockopt(handle, option, &value, MemoryLayout<Int32>.size) != 0 {
            throw ZMQError.last("set \(name) \(value)")
        }
    }

    private func set(_ option: Int32, bytes: [UInt8], _ name: String) throws(ZMQError) {
        let handle = try open("set \(name)")
        // Never hand libzmq a null pointer, even for an empty value.
        var empty: UInt8 = 0
        let rc = bytes.isEmpty
            ? zmq_setsockopt(handle, option, &empty, 0)
            : bytes.withUnsafeBytes { zmq_setsockopt(handle, option, $0.baseAddress, $0.count) }
        if rc != 0 { throw ZMQError.last("set \(name)") }
    }
}
