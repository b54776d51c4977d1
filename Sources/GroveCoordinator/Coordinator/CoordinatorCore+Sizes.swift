import GroveCluster
import GroveWire

/// The sizes a client chooses, checked before anything of its request is kept: its address
/// (`limits.addressBytes`) and its payload (`limits.payloadBytes`), and the form of its address
/// (NFC, so that bytes and Swift strings agree on which addresses are the same). The frame
/// count and each frame's size are bounded before the core sees a message: the I/O loop copies at
/// most eight frames of a message, and ZeroMQ refuses larger frames (`limits.messageBytes`).
/// The checks and their errors are ``AddressChecks``' (GroveCluster); these read a message view.
extension CoordinatorCore {
    /// Whether `request`'s address and payload are within the limits: what every request asks,
    /// without building the refusal (``sizeRefusal(_:)``).
    @inline(__always)
    func withinSizes(_ request: MessageView) -> Bool {
        AddressChecks.withinSizes(addressCount: request.addressBytes.count, payloadCount: request.payloadCount,
                                  maxAddress: maxAddress, maxPayload: maxPayload)
    }

    /// Why `request` is refused for its size, with the error that says so; `nil` when its
    /// address and payload are within the limits.
    func sizeRefusal(_ request: MessageView) -> (reason: OwedReason, error: WireError)? {
        AddressChecks.sizeRefusal(addressCount: request.addressBytes.count, payloadCount: request.payloadCount, maxAddress: maxAddress,
                                  maxPayload: maxPayload, correlation: request.correlation, address: { try? request.address() })
    }
}
