import Foundation
package import GroveWire

/// The checks of an address and a payload a client sent, before anything of its request is
/// kept: sizes (`limits.addressBytes`, `limits.payloadBytes`), then form (no control character,
/// NFC, so that bytes and Swift strings agree on which addresses are the same), and the errors
/// that say what was wrong. Over bytes and strings, not a coordinator's message view: the
/// coordinator asks them of every request, and a worker serving clients directly is to ask the
/// same (docs/DIRECT-ROUTES.md, 2.1). The hot ones are `@inlinable`: the coordinator calls them
/// across the module boundary for each request.
package enum AddressChecks {
    /// Whether a request's address (`addressCount` bytes) and payload are within the limits:
    /// what every request asks, without building the refusal (``sizeRefusal(addressCount:payloadCount:maxAddress:maxPayload:correlation:address:)``).
    @inlinable
    package static func withinSizes(addressCount: Int, payloadCount: Int, maxAddress: Int, maxPayload: Int) -> Bool {
        addressCount <= maxAddress && payloadCount <= maxPayload
    }

    /// Why a request is refused for its size, with the error that says so; `nil` when its
    /// address and payload are within the limits.
    /// - Parameter address: The address as text, for the payload's refusal; `nil` when it is not UTF-8.
    /// - Parameter answerer: Who refuses it, for the text ("the coordinator", "worker NAME").
    package static func sizeRefusal(addressCount: Int, payloadCount: Int, maxAddress: Int, maxPayload: Int, correlation: UInt64,
                                    answerer: String = "the coordinator", address: () -> String?) -> (reason: OwedReason, error: WireError)? {
        if addressCount > maxAddress {
            return (.addressTooLong, addressTooLong(addressCount, limit: maxAddress, correlation: correlation))
        }
        if payloadCount > maxPayload {
            return (.payloadTooLarge, payloadTooLarge(payloadCount, limit: maxPayload, address: address(), answerer: answerer))
        }
        return nil
    }

    /// An address over `limits.addressBytes`; `count` omitted when the error is sent later, for
    /// a run of such requests (only the limit is remembered, not each size).
    package static func addressTooLong(_ count: Int?, limit: Int, correlation: UInt64?) -> WireError {
        let size = count.map { "has \($0) bytes" } ?? "was longer than that"
        return WireError(.malformedFrame,
            "the address \(size); at most \(limit) are accepted (limits.addressBytes in the topology); use a shorter key",
            correlation: correlation)
    }

    /// A payload over `limits.payloadBytes`, as ``addressTooLong(_:limit:correlation:)``, refused
    /// by `answerer` ("the coordinator", "worker NAME").
    package static func payloadTooLarge(_ count: Int?, limit: Int, address: String?, answerer: String = "the coordinator") -> WireError {
        let size = count.map { "has \($0) bytes" } ?? "was larger than that"
        return WireError(.oversized,
            "the payload \(size); \(answerer) accepts at most \(limit) (limits.payloadBytes in the topology); send less, or split it",
            address: address)
    }

    /// Whether `address` is in Unicode Normalization Form C (``MachineAddress/isNFC(_:)``).
    package static func isNFC(_ address: String) -> Bool { MachineAddress.isNFC(address) }

    /// What is wrong with the form of `address`, an address a worker wrote (a message's address
    /// frame, an instance it reports, a crash it reports), held to what a client's is held to:
    /// at most `limit` bytes (`limits.addressBytes`), no control character, NFC. `nil` when it
    /// is well-formed; printable ASCII costs one pass over its bytes.
    /// Called for many a worker's message, so its common case crosses the module boundary
    /// (`@inlinable`); the rest is out of line.
    @inlinable
    package static func addressFormProblem(_ address: String, limit: Int) -> String? {
        var address = address
        let count = address.utf8.count
        guard count <= limit else { return "\(count) bytes, over limits.addressBytes \(limit)" }
        if address.withUTF8({ isPrintableASCII(UnsafeRawBufferPointer($0)) }) { return nil }
        return unprintableFormProblem(address)
    }

    /// What ``addressFormProblem(_:limit:)`` finds wrong with an address that is not all
    /// printable ASCII.
    @usableFromInline
    package static func unprintableFormProblem(_ address: String) -> String? {
        if let control = controlCharacter(in: address) {
            return "the control character U+" + String(control.scalar.value, radix: 16, uppercase: true).leftPadded(to: 4)
                + " at byte \(control.offset)"
        }
        return isNFC(address) ? nil : "not in Unicode Normalization Form C (NFC)"
    }

    /// Whether `bytes` are all printable ASCII (so NFC, and no control character): the hot
    /// path's check, one comparison per byte where they arrived (`byte - 0x20`, wrapping, is
    /// below 0x5F exactly for 0x20 through 0x7E).
    @inlinable
    package static func isPrintableASCII(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var outside: UInt8 = 0
        for byte in bytes { outside |= (byte &- 0x20) >= 0x5F ? 1 : 0 }
        return outside == 0
    }

    /// The first control character of `address` (C0, DEL, C1, or a line or paragraph
    /// separator), which would let a client write lines of its own into logs and listings that
    /// name the address; `nil` when it has none.
    package static func controlCharacter(in address: String) -> (scalar: Unicode.Scalar, offset: Int)? {
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
    package static func controlInAddress(_ found: (scalar: Unicode.Scalar, offset: Int), correlation: UInt64) -> WireError {
        let code = "U+" + String(found.scalar.value, radix: 16, uppercase: true).leftPadded(to: 4)
        return WireError(.malformedFrame,
            "the address holds the control character \(code) at byte \(found.offset); addresses may not hold control "
                + "characters (they would split the lines of logs and listings that name them); use printable characters",
            correlation: correlation)
    }

    /// The refusal of an address that is not in NFC, naming the form to send.
    package static func notNFC(_ address: String, correlation: UInt64) -> WireError {
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
