import GroveCluster
@_spi(GroveInternal) import GroveWire

extension WorkerRuntime {
    /// A direct request's payload as the worker hands it on: a keyed event's client id bound to
    /// the key of the connection it came on, as the coordinator binds those it forwards
    /// (``IdempotencyKey/appendBound(_:to:into:correlation:)``), so a retry that moves between
    /// the direct road and the coordinator's is the same sender's; anything else as it came.
    /// From a trusted peer (no CURVE) the key is checked and kept as sent.
    /// - Parameter userID: The connection's ZAP `User-Id` (``Gatekeeper/trustedUser``, or a key
    ///   and an address).
    /// - Throws: ``WireError`` `malformed-frame` when the key (or the trace context before it) is
    ///   not one a client may send.
    static func boundToSender(_ payload: ArraySlice<UInt8>, _ header: Header, userID: String) throws(WireError) -> ArraySlice<UInt8> {
        guard header.kind == .event, header.flags.contains(.keyed) else { return payload }
        if let sender = Gatekeeper.senderKey(ofUserID: userID) {
            return try IdempotencyKey.bound(payload, flags: header.flags, to: sender, correlation: header.correlation)[...]
        }
        guard userID == Gatekeeper.trustedUser else {
            // Not reached: the worker's gatekeeper gives a key or `trusted`. Never kept unbound.
            throw WireError(.forbidden, "this connection has no client key to keep its idempotency keys under; "
                            + "send the event without flag bit 4, or connect with a client key of the topology")
        }
        let keyed = header.flags.contains(.traced) ? try TraceParent.split(payload, correlation: header.correlation).body : payload
        try IdempotencyKey.check(keyed, correlation: header.correlation)
        return payload
    }
}
