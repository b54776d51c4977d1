/// Keys tied to their sender (issue 34): a client id is 16 random bytes a client chose, and
/// another client key with `send` on the same machine that learns it could send its own event
/// under that id and sequence first, so that the real client's event would be answered with the
/// other's answer and never applied. So where a client is known by a CURVE key, the worker keeps
/// each key under its *bound* client id: the sender's public key (Z85, ``senderLength`` bytes)
/// in front of the id the client sent. The same id and sequence from two keys are then two keys,
/// and a key reaches only the answers of events its own key sent.
///
/// Who binds: the coordinator, for every keyed event a CURVE client sends it, before it forwards
/// it (it knows the key from the connection's ZAP `User-Id`); a worker, for those sent to its
/// direct socket, the same way from its own connection's `User-Id`. The identity is the key, not
/// a socket or a routing id, so a retry that moves from one road to the other, a relaunch, and a
/// handoff (the record read back by another worker from PostgreSQL) all see the same sender.
/// A topology without CURVE (every peer trusted: the launching user over ipc, or anyone on an
/// insecure tcp endpoint) has one sender, and binds nothing: its keys are kept as sent.
extension IdempotencyKey {
    /// The bytes of a sender's identity in a bound client id: a CURVE public key in Z85.
    public static let senderLength = 40
    /// The longest client id a worker keeps: a client's own behind its sender's key.
    public static let maximumBoundClientLength = maximumClientLength + senderLength

    /// Appends `keyed`, the key and event of a keyed `event`'s payload (any trace context split
    /// off), to `out` with its client id bound to `sender` (``senderLength`` bytes; empty: a
    /// trusted peer, nothing bound): the length byte grows by the sender's, whose bytes go in
    /// front of the client id; the sequence and the event follow unchanged.
    /// - Throws: ``WireError`` `malformed-frame` naming the payload frame when the key is not one
    ///   a client may send (``split(_:correlation:longest:)``): nothing is appended then.
    package static func appendBound<Bytes: Collection<UInt8>>(_ keyed: Bytes, to sender: [UInt8], into out: inout [UInt8],
                                                             correlation: UInt64 = 0) throws(WireError) where Bytes.Index == Int {
        precondition(sender.isEmpty || sender.count == senderLength, "a sender is a Z85 public key of \(senderLength) bytes")
        let length = try clientLength(of: keyed, correlation: correlation)
        out.reserveCapacity(out.count + keyed.count + sender.count)
        out.append(UInt8(length + sender.count))
        out.append(contentsOf: sender)
        let rest = keyed.dropFirst()
        // One copy for contiguous bytes (an array, a typed buffer), not one per byte.
        if rest.withContiguousStorageIfAvailable({ out.append(contentsOf: $0) }) == nil { out.append(contentsOf: rest) }
    }

    /// The payload of a keyed `event` with `flags` (a trace context first when it is traced, as
    /// it came) with its key's client id bound to `sender` (``appendBound(_:to:into:correlation:)``).
    /// - Throws: ``WireError`` `malformed-frame` when the trace context or the key is malformed.
    package static func bound(_ payload: ArraySlice<UInt8>, flags: Header.Flags, to sender: [UInt8],
                              correlation: UInt64 = 0) throws(WireError) -> [UInt8] {
        var out: [UInt8] = []
        var keyed = payload
        if flags.contains(.traced) {
            let (trace, body) = try TraceParent.split(payload, correlation: correlation)
            TraceParent.write(trace, into: &out)
            keyed = body
        }
        try appendBound(keyed, to: sender, into: &out, correlation: correlation)
        return out
    }

    /// The sender a client id as a worker keeps it names: the first ``senderLength`` bytes of
    /// a bound id (longer than them: the client key's Z85 text); empty for an id kept as sent
    /// (a trusted peer's, 1 to ``senderLength`` bytes). Without CURVE every peer is one trusted
    /// sender, and a trusted peer's id over ``senderLength`` bytes names a sender of its own:
    /// only the launching user or an `insecure` endpoint's peers can send such ids unbound.
    package static func sender(ofKept client: [UInt8]) -> ArraySlice<UInt8> {
        client.count > senderLength ? client[..<senderLength] : []
    }

    /// Checks the key `keyed` starts with (the payload of a keyed `event`, any trace context split
    /// off) as a client may send it.
    /// - Throws: ``WireError`` `malformed-frame` naming the payload frame, and what is wrong.
    package static func check<Bytes: Collection<UInt8>>(_ keyed: Bytes, correlation: UInt64 = 0) throws(WireError) where Bytes.Index == Int {
        _ = try clientLength(of: keyed, correlation: correlation)
    }
}
