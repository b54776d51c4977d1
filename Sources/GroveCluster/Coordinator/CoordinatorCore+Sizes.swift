import GroveWire

/// The sizes a client chooses, checked before anything of its request is kept: its address
/// (`limits.addressBytes`) and its payload (`limits.payloadBytes`). The frame
/// count and each frame's size are bounded before the core sees a message: the I/O loop copies at
/// most eight frames of a message, and ZeroMQ refuses larger frames (`limits.messageBytes`).
extension CoordinatorCore {
    /// Why `request` is refused for its size, with the error that says so; `nil` when its
    /// address and payload are within the limits.
    func sizeRefusal(_ request: MessageView) -> (reason: OwedReason, error: WireError)? {
        let limits = topology.limits
        if request.addressBytes.count > limits.addressBytes {
            return (.addressTooLong, Self.addressTooLong(request.addressBytes.count, limit: limits.addressBytes,
                                                         correlation: request.correlation))
        }
        if request.payloadCount > maxPayload {
            return (.payloadTooLarge, Self.payloadTooLarge(request.payloadCount, limit: maxPayload, address: try? request.address()))
        }
        return nil
    }

    /// An address over `limits.addressBytes`; `count` omitted when the error is sent later, for
    /// a run of such requests (only the limit is remembered, not each size).
    static func addressTooLong(_ count: Int?, limit: Int, correlation: UInt64?) -> WireError {
        let size = count.map { "has \($0) bytes" } ?? "was longer than that"
        return WireError(.malformedFrame,
            "the address \(size); at most \(limit) are accepted (limits.addressBytes in the topology); use a shorter key",
            correlation: correlation)
    }

    /// A payload over `limits.payloadBytes`, as ``addressTooLong(_:limit:correlation:)``.
    static func payloadTooLarge(_ count: Int?, limit: Int, address: String?) -> WireError {
        let size = count.map { "has \($0) bytes" } ?? "was larger than that"
        return WireError(.oversized,
            "the payload \(size); the coordinator accepts at most \(limit) (limits.payloadBytes in the topology); send less, or split it",
            address: address)
    }
}
