import Foundation
import GroveCluster
import GroveWire

/// The sizes a client chooses, checked before anything of its request is kept: its address
/// (`limits.addressBytes`) and its payload (`limits.payloadBytes`), and the form of its address
/// (NFC, so that bytes and Swift strings agree on which addresses are the same). The frame
/// count and each frame's size are bounded before the core sees a message: the I/O loop copies at
/// most eight frames of a message, and ZeroMQ refuses larger frames (`limits.messageBytes`).
extension CoordinatorCore {
    /// Whether `request`'s address and payload are within the limits: what every request asks,
    /// without building the refusal (``sizeRefusal(_:)``).
    @inline(__always)
    func withinSizes(_ request: MessageView) -> Bool {
        request.addressBytes.count <= maxAddress && request.payloadCount <= maxPayload
    }

    /// Why `request` is refused for its size, with the error that says so; `nil` when its
    /// address and payload are within the limits.
    func sizeRefusal(_ request: MessageView) -> (reason: OwedReason, error: WireError)? {
        if request.addressBytes.count > maxAddress {
            return (.addressTooLong, Self.addressTooLong(request.addressBytes.count, limit: maxAddress,
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

    /// Whether `address` is in Unicode Normalization Form C (``MachineAddress/isNFC(_:)``).
    @inline(__always)
    static func isNFC(_ address: String) -> Bool { MachineAddress.isNFC(address) }

    /// What is wrong with the form of `address`, an address a worker wrote (a message's address
    /// frame, an instance it reports, a crash it reports), held to what a client's is held to:
    /// at most `limit` bytes (`limits.addressBytes`), no control character, NFC. `nil` when it
    /// is well-formed; printable ASCII costs one pass over its bytes.
    static func addressFormProblem(_ address: String, limit: Int) -> String? {
        var address = address
        let count = address.utf8.count
        guard count <= limit else { return "\(count) bytes, over limits.addressBytes \(limit)" }
        if address.withUTF8({ isPrintableASCII(UnsafeRawBufferPointer($0)) }) { return nil }
        if let control = controlCharacter(in: address) {
            return "the control character U+" + String(control.scalar.value, radix: 16, uppercase: true).leftPadded(to: 4)
                + " at byte \(control.offset)"
        }
        return isNFC(address) ? nil : "not in Unicode Normalization Form C (NFC)"
    }

    /// Whether `bytes` are all printable ASCII (so NFC, and no control character): the hot
    /// path's check, one comparison per byte where they arrived (`byte - 0x20`, wrapping, is
    /// below 0x5F exactly for 0x20 through 0x7E).
    @inline(__always)
    static func isPrintableASCII(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var outside: UInt8 = 0
        for byte in bytes { outside |= (byte &- 0x20) >= 0x5F ? 1 : 0 }
        return outside == 0
    }

    /// The first control character of `address` (C0, DEL, C1, or a line or paragraph
    /// separator), which would let a client write lines of its own into logs and listings that
    /// name the address; `nil` when it has none.
    static func controlCharacter(in address: String) -> (scalar: Unicode.Scalar, offset: Int)? {
        var offset = 0
        for scalar in address.unicodeScalars {
            if scalar.properties.generalCategory == .control || scalar == "\u{2028}" || scalar == "\u{2029}" {
                return (scalar, offset)
            }
            offset += scalar.utf8.count
        }
        return nil
    }

    /// The refusal of an address holding a control character.
    static func controlInAddress(_ found: (scalar: Unicode.Scalar, offset: Int), correlation: UInt64) -> WireError {
        let code = "U+" + String(found.scalar.value, radix: 16, uppercase: true).leftPadded(to: 4)
        return WireError(.malformedFrame,
            "the address holds the control character \(code) at byte \(found.offset); addresses may not hold control "
                + "characters (they would split the lines of logs and listings that name them); use printable characters",
            correlation: correlation)
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

private extension String {
    func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
