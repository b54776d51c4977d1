package import GroveWire

/// The bound on a client's batch (`limits.batchEnvelopes`), checked from its header alone (the
/// header's correlation is its envelope count) before any envelope is read: every envelope of a
/// batch is decided in the one turn that reads it, and on a release build one 16 MiB batch of
/// 700,000 `get`s held the coordinator's loop for 1.9 s (a worker's direct socket for 1 s, near
/// its 1.5 s heartbeat timeout). The coordinator's clients endpoint and a worker's direct socket
/// ask the same check, so the two roads refuse with the same words.
package enum BatchBound {
    /// Why a client's batch whose header counts `count` envelopes is refused as a whole, or `nil`
    /// when it is within `limit`. `oversized`, as a payload over `limits.payloadBytes` is, under
    /// correlation 0 as every refusal of a whole batch (docs/PROTOCOL.md, "Batches").
    /// - Parameter answerer: Who refuses it, for the text ("the coordinator", "worker NAME").
    package static func refusal(count: UInt64, limit: Int, answerer: @autoclosure () -> String = "the coordinator") -> WireError? {
        guard count > UInt64(max(limit, 0)) else { return nil }
        return tooMany(count, limit: limit, answerer: answerer())
    }

    private static func tooMany(_ count: UInt64, limit: Int, answerer: String) -> WireError {
        WireError(.oversized, """
            the batch's header counts \(count) envelopes; \(answerer) accepts at most \(limit) in one batch \
            (limits.batchEnvelopes in the topology), so none of them was carried out: split it into batches of at most \(limit) \
            (docs/PROTOCOL.md, 'Batches')
            """)
    }
}
