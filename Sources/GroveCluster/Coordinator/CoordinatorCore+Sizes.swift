import Foundation
import GroveWire

/// The sizes a client chooses, checked before anything of its request is kept: its address
/// (`limits.addressBytes`) and its payload (`limits.payloadBytes`), and the form of its address
/// (NFC, so that bytes and Swift strings agree on which addresses are the same). The frame
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

    /// Whether `address` is in Unicode Normalization Form C. Swift compares strings by canonical
    /// equivalence (`"e\u{301}" == "é"`) while grants, placement and stores compare bytes: with
    /// every address in NFC, equal strings are equal bytes, so they all agree. ASCII is NFC, and
    /// costs one pass over the bytes.
    static func isNFC(_ address: String) -> Bool {
        if address.utf8.allSatisfy({ $0 < 0x80 }) { return true }
        return address.precomposedStringWithCanonicalMapping.utf8.elementsEqual(address.utf8)
    }

    /// Whether `bytes` are all ASCII (so NFC): the hot path's check, a loop over the bytes where
    /// they arrived.
    @inline(__always)
    static func isASCII(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var high: UInt8 = 0
        for byte in bytes { high |= byte }
        return high < 0x80
    }

    /// The refusal of an address that is not in NFC, naming the form to send.
    static func notNFC(_ address: String, correlation: UInt64) -> WireError {
        let precomposed = address.precomposedStringWithCanonicalMapping
        return WireError(.malformedFrame,
            "the address is not in Unicode Normalization Form C (NFC), so it could name the same machine as another byte sequence; "
                + "send it precomposed, as \(JSONValue.string(precomposed)) (\(precomposed.utf8.count) bytes)",
            correlation: correlation)
    }
}
