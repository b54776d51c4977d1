/// One envelope of a batch payload, as offsets into it: what routers read without copying.
public struct Envelope: Sendable, Hashable {
    public var kind: MessageKind
    public var flags: Header.Flags
    public var correlation: UInt64
    /// Where the address's UTF-8 bytes are in the payload (not yet checked to be UTF-8).
    public var address: Range<Int>
    /// Where the envelope's own payload is.
    public var payload: Range<Int>

    /// The envelope as a message, copying its address and payload out of `batch`.
    /// - Throws: ``WireError`` `malformed-frame` when the address is not UTF-8.
    /// - Throws: ``WireError`` `malformed-frame` also when a trace context's prefix runs past
    ///   the payload (``TraceParent``).
    public func message(in batch: [UInt8]) throws(WireError) -> WireMessage {
        try WireMessage(wire: Header(kind, flags: flags, correlation: correlation),
                        address: try addressText(in: batch), payload: batch[payload])
    }

    /// The address as text.
    /// - Throws: ``WireError`` `malformed-frame` when it is not UTF-8 or longer than
    ///   ``WireMessage/maximumAddressLength``.
    public func addressText(in batch: [UInt8]) throws(WireError) -> String {
        guard address.count <= WireMessage.maximumAddressLength else {
            throw WireMessage.addressTooLong(address.count, correlation: correlation)
        }
        guard let text = String(validatingUTF8Quickly: batch[address]) else {
            throw WireError(.malformedFrame, "a batch envelope has an address that is not UTF-8", correlation: correlation)
        }
        return text
    }
}

/// Builds a batch payload envelope by envelope; envelopes read from another batch are copied
/// byte for byte, so a router forwards them without making a message of each.
@_spi(GroveInternal) public struct BatchBuilder: Sendable {
    @usableFromInline var envelopeCount = 0
    @usableFromInline var bytes: [UInt8] = []

    /// Envelopes appended so far.
    public var count: Int { envelopeCount }
    /// The payload of the batch message under construction.
    public var payload: [UInt8] { bytes }

    @inlinable
    public init() {}

    /// An empty builder with room for `byteCount` payload bytes (at most 256 KiB, so a
    /// destination that goes idle holds little): a sender that just sent a batch starts the next
    /// one at the last one's size instead of growing it from nothing again.
    @inlinable
    public init(reservingCapacity byteCount: Int) {
        bytes.reserveCapacity(min(byteCount, 1 << 18))
    }

    @inlinable
    public var isEmpty: Bool { count == 0 }

    /// Payload bytes so far.
    @inlinable
    public var byteCount: Int { bytes.count }

    /// Where senders cut a batch: big enough that per-message costs vanish, small enough to
    /// stay far below receivers' message size limits (the coordinator accepts 16 MiB).
    public static let preferredByteCount = 1 << 20

    @inlinable
    public mutating func append(
        kind: MessageKind, flags: Header.Flags, correlation: UInt64,
        address: some Collection<UInt8>, payload body: some Collection<UInt8>
    ) {
        // Addresses are checked on the way in (at most WireMessage.maximumAddressLength bytes).
        assert(address.count <= 0xFFFF, "an address longer than a batch envelope can carry")
        // Everything but the payload is written to the stack and appended in one copy (for
        // addresses up to 48 bytes): each append costs a uniqueness and a capacity check, and
        // appending byte by byte cost them per byte on routers' hot path.
        let addressCount = address.count
        var head: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &head) { raw in
            raw[0] = kind.rawValue
            raw[1] = flags.rawValue
            raw.storeBytes(of: correlation.bigEndian, toByteOffset: 2, as: UInt64.self)
            raw.storeBytes(of: UInt16(truncatingIfNeeded: addressCount).bigEndian, toByteOffset: 10, as: UInt16.self)
            if addressCount <= raw.count - 16 {
                UnsafeMutableRawBufferPointer(rebasing: raw[12 ..< 12 + addressCount]).copyBytes(from: address)
                raw.storeBytes(of: UInt32(truncatingIfNeeded: body.count).bigEndian, toByteOffset: 12 + addressCount, as: UInt32.self)
                bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: raw[0 ..< 16 + addressCount]))
            } else {
                bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: raw[0 ..< 12]))
                bytes.append(contentsOf: address)
                withUnsafeBytes(of: UInt32(truncatingIfNeeded: body.count).bigEndian) { bytes.append(contentsOf: $0) }
            }
        }
        bytes.append(contentsOf: body)
        envelopeCount += 1
    }

    /// Appends an envelope whose payload `write` appends in place (an encoder writing straight
    /// into the batch, with no array of its own to copy). `write` gets the whole batch and must
    /// only append to it. When `write` throws, the batch is left as it was.
    @inlinable
    public mutating func append<Failure: Error>(
        kind: MessageKind, flags: Header.Flags, correlation: UInt64, address: some Collection<UInt8>,
        writingPayload write: (inout [UInt8]) throws(Failure) -> Void
    ) throws(Failure) {
        let start = bytes.count
        append(kind: kind, flags: flags, correlation: correlation, address: address, payload: EmptyCollection())
        let bodyStart = bytes.count
        do {
            try write(&bytes)
        } catch {
            bytes.removeSubrange(start...)
            envelopeCount -= 1
            throw error
        }
        precondition(bytes.count >= bodyStart, "a payload writer removed bytes of the batch; it must only append")
        let length = UInt32(truncatingIfNeeded: bytes.count - bodyStart).bigEndian
        withUnsafeBytes(of: length) { raw in
            for index in 0 ..< 4 { bytes[bodyStart - 4 + index] = raw[index] }
        }
    }

    /// Appends the envelopes of another batch's payload as they are.
    /// - Parameter count: How many envelopes `envelopes` holds (its header's correlation).
    public mutating func append(envelopes: [UInt8], count added: Int) {
        bytes.append(contentsOf: envelopes)
        envelopeCount += added
    }

    /// Appends `envelope` from `batch` with another correlation id.
    @inlinable
    public mutating func append(_ envelope: Envelope, from batch: [UInt8], correlation: UInt64) {
        // Copied through the batch's buffer: slices of the array would retain and release its
        // storage twice per envelope, on routers' hot path. Slicing a buffer is unchecked in
        // release builds, so the ranges are checked here.
        precondition(envelope.address.lowerBound >= 0 && envelope.address.upperBound <= batch.count
                     && envelope.payload.lowerBound >= 0 && envelope.payload.upperBound <= batch.count,
                     "the envelope's ranges are outside the batch it is copied from")
        batch.withUnsafeBufferPointer { source in
            append(kind: envelope.kind, flags: envelope.flags, correlation: correlation,
                   address: UnsafeBufferPointer(rebasing: source[envelope.address]),
                   payload: UnsafeBufferPointer(rebasing: source[envelope.payload]))
        }
    }

    @inlinable
    public mutating func append(_ message: WireMessage) {
        guard let trace = message.trace else {
            append(kind: message.header.kind, flags: message.header.flags, correlation: message.header.correlation,
                   address: message.address.utf8, payload: message.payload)
            return
        }
        append(kind: message.header.kind, flags: message.wireHeader.flags, correlation: message.header.correlation,
               address: message.address.utf8, writingPayload: { (bytes: inout [UInt8]) -> Void in
            TraceParent.write(trace, into: &bytes)
            bytes.append(contentsOf: message.payload)
        })
    }

    /// The frames to send (header, address, payload): one batch message, or the single
    /// envelope as a plain message when there is only one.
    public func frames() -> [[UInt8]] {
        withLoneMessage { [Array($0), Array($1), Array($2)] } ?? [Header(.batch, correlation: UInt64(count)).bytes, [], payload]
    }

    /// When the builder holds one envelope, calls `body` with it as a plain message's three
    /// frames (header on the stack, address and payload in the builder's bytes), so a sender
    /// makes no arrays for them; nil, without calling `body`, for any other count.
    @inlinable
    public func withLoneMessage<Result>(
        _ body: (_ header: UnsafeRawBufferPointer, _ address: UnsafeRawBufferPointer, _ payload: UnsafeRawBufferPointer) throws -> Result
    ) rethrows -> Result? {
        guard count == 1, let envelope = try? Batch.envelopes(in: bytes).first else { return nil }
        return try Header(envelope.kind, flags: envelope.flags, correlation: envelope.correlation).withUnsafeBytes { header in
            try bytes.withUnsafeBytes { source in
                try body(header, UnsafeRawBufferPointer(rebasing: source[envelope.address]),
                         UnsafeRawBufferPointer(rebasing: source[envelope.payload]))
            }
        }
    }

    /// Removes the last envelope appended and returns its bytes, to send in another batch or
    /// not at all (a sender that learns an envelope's size only once it is written).
    /// - Parameter start: ``byteCount`` just before that envelope was appended.
    public mutating func removeLast(startingAt start: Int) -> [UInt8] {
        precondition(count > 0 && start >= 0 && start <= bytes.count, "no envelope starts at byte \(start) of the batch")
        let removed = Array(bytes[start...])
        bytes.removeSubrange(start...)
        envelopeCount -= 1
        return removed
    }

    /// Empties the builder, keeping its capacity.
    public mutating func removeAll() {
        envelopeCount = 0
        bytes.removeAll(keepingCapacity: true)
    }
}
