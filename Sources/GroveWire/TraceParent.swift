/// The W3C trace context (`traceparent`, https://www.w3.org/TR/trace-context/) a message carries
/// when its header has ``Header/Flags/traced`` (bit 3): the payload then starts with one byte
/// `n` and `n` bytes of the `traceparent` value in ASCII, and the payload proper follows
/// (docs/PROTOCOL.md, "Trace context"). Only the framing lives here: which span a process makes
/// of it is the tracer's business (GroveCluster's `WireTracing`).
///
/// ```
/// 0x37 "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01" {"login":{}}
/// ```
public enum TraceParent {
    /// The longest value a prefix can carry (its length is one byte).
    public static let maximumLength = 255

    /// Splits a payload whose header has ``Header/Flags/traced``: the `traceparent` bytes (as
    /// they came, not checked yet) and the payload proper.
    /// - Throws: ``WireError`` `malformed-frame` when the prefix runs past the payload: then
    ///   nothing says where the payload proper starts.
    @inlinable
    public static func split(_ payload: ArraySlice<UInt8>, correlation: UInt64 = 0)
        throws(WireError) -> (trace: ArraySlice<UInt8>, body: ArraySlice<UInt8>) {
        guard let count = payload.first.map(Int.init), payload.count > count else {
            throw truncated(payload.count, correlation: correlation)
        }
        let start = payload.startIndex + 1
        return (payload[start ..< start + count], payload[(start + count)...])
    }

    /// ``split(_:correlation:)`` in borrowed memory (the coordinator's views).
    /// - Throws: ``WireError`` `malformed-frame`, as ``split(_:correlation:)`` does.
    @inlinable
    public static func split(_ payload: UnsafeRawBufferPointer, correlation: UInt64 = 0)
        throws(WireError) -> (trace: UnsafeRawBufferPointer, body: UnsafeRawBufferPointer) {
        guard let count = payload.first.map(Int.init), payload.count > count else {
            throw truncated(payload.count, correlation: correlation)
        }
        return (UnsafeRawBufferPointer(rebasing: payload[1 ..< 1 + count]), UnsafeRawBufferPointer(rebasing: payload[(1 + count)...]))
    }

    @usableFromInline
    static func truncated(_ size: Int, correlation: UInt64) -> WireError {
        WireError(.malformedFrame,
            "the header says the payload starts with a trace context (flag bit 3), but its length byte runs past the \(size)-byte payload; "
            + "send one byte n, n bytes of traceparent, then the payload, or clear the flag (docs/PROTOCOL.md, 'Trace context')",
            correlation: correlation)
    }

    /// Appends the prefix for `traceparent` to a payload under construction; call it before
    /// writing the payload proper, and set ``Header/Flags/traced``.
    @inlinable
    public static func write(_ traceparent: some Collection<UInt8>, into payload: inout [UInt8]) {
        precondition(traceparent.count <= maximumLength, "a traceparent longer than \(maximumLength) bytes")
        payload.append(UInt8(traceparent.count))
        payload.append(contentsOf: traceparent)
    }

    /// `payload` with the prefix for `traceparent` in front.
    public static func prefixed(_ traceparent: [UInt8], _ payload: some Collection<UInt8>) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(1 + traceparent.count + payload.count)
        write(traceparent, into: &out)
        out.append(contentsOf: payload)
        return out
    }

    /// What is wrong with a `traceparent` value, or `nil` when it is one this reads: version
    /// `00` exactly as W3C writes it (`00-` 32 lowercase hex digits `-` 16 `-` 2, trace and
    /// parent ids not all zeros), or a later version (not `ff`) whose first 55 characters have
    /// that form and whose next, if any, is `-` (the specification's rule for versions it does
    /// not know yet). Checked by hand: a fixed layout of 55 ASCII characters, and GroveWire
    /// depends on nothing.
    public static func problem(with value: some Collection<UInt8>) -> String? {
        let bytes = Array(value)
        guard bytes.count >= 55 else { return "it has \(bytes.count) bytes; a traceparent has 55, e.g. 00-<32 hex>-<16 hex>-01" }
        func hex(_ range: Range<Int>) -> Bool {
            bytes[range].allSatisfy { (0x30 ... 0x39).contains($0) || (0x61 ... 0x66).contains($0) }
        }
        guard hex(0 ..< 2), bytes[2] == 0x2D, hex(3 ..< 35), bytes[35] == 0x2D, hex(36 ..< 52), bytes[52] == 0x2D, hex(53 ..< 55) else {
            return "it is not version-traceid-parentid-flags in lowercase hex (2-32-16-2 digits)"
        }
        let version = bytes[0 ..< 2]
        if version.elementsEqual("ff".utf8) { return "version ff is invalid" }
        if version.elementsEqual("00".utf8), bytes.count != 55 { return "version 00 has exactly 55 characters; it has \(bytes.count)" }
        if bytes.count > 55, bytes[55] != 0x2D { return "a later version's fields must continue with '-'" }
        if bytes[3 ..< 35].allSatisfy({ $0 == 0x30 }) { return "its trace id is all zeros" }
        if bytes[36 ..< 52].allSatisfy({ $0 == 0x30 }) { return "its parent id is all zeros" }
        return nil
    }
}
