/// Many messages in one ZeroMQ message: what peers send under load, so the per-message costs
/// (system calls, wake-ups, allocations) are paid once per batch instead of once per event.
///
/// A batch is a message of kind ``MessageKind/batch`` with an empty address whose payload is the
/// envelopes one after another, each:
/// ```
/// u8 kind, u8 flags, u64 correlation (big-endian),
/// u16 address length (big-endian), address (UTF-8),
/// u32 payload length (big-endian), payload
/// ```
/// The outer header's correlation is the number of envelopes. Batches do not nest.
public enum Batch {
    /// Packs `messages` into one batch message (a single message is returned unchanged).
    public static func pack(_ messages: [WireMessage]) -> WireMessage {
        if messages.count == 1 { return messages[0] }
        var payload: [UInt8] = []
        payload.reserveCapacity(messages.reduce(0) { $0 + 16 + $1.address.utf8.count + $1.payload.count + ($1.trace.map { 1 + $0.count } ?? 0) })
        for message in messages { append(message, to: &payload) }
        return WireMessage(Header(.batch, correlation: UInt64(messages.count)), payload: payload)
    }

    /// Packs messages given as their three frames (header, address, payload) without parsing
    /// them; returns the frames of one batch message (or the single message unchanged).
    public static func pack(frames messages: [[[UInt8]]]) -> [[UInt8]] {
        if messages.count == 1 { return messages[0] }
        var payload: [UInt8] = []
        payload.reserveCapacity(messages.reduce(0) { $0 + 16 + $1[1].count + $1[2].count })
        for frames in messages {
            let header = frames[0]
            payload.append(contentsOf: header[2..<12]) // kind, flags, correlation: already in envelope order
            appendBigEndian(UInt64(frames[1].count), bytes: 2, to: &payload)
            payload.append(contentsOf: frames[1])
            appendBigEndian(UInt64(frames[2].count), bytes: 4, to: &payload)
            payload.append(contentsOf: frames[2])
        }
        return [Header(.batch, correlation: UInt64(messages.count)).bytes, [], payload]
    }

    /// Appends one envelope to a batch payload under construction.
    public static func append(_ message: WireMessage, to payload: inout [UInt8]) {
        payload.append(message.header.kind.rawValue)
        payload.append(message.wireHeader.flags.rawValue)
        appendBigEndian(message.header.correlation, bytes: 8, to: &payload)
        let address = message.address.utf8
        appendBigEndian(UInt64(address.count), bytes: 2, to: &payload)
        payload.append(contentsOf: address)
        let body = message.wirePayload
        appendBigEndian(UInt64(body.count), bytes: 4, to: &payload)
        payload.append(contentsOf: body)
    }

    /// Why a batch whose address frame is `count` bytes is refused, or `nil` when it is empty:
    /// each envelope carries its own address, and one in the frame would be ignored, which a
    /// sender could take for an address its envelopes are sent to.
    /// - Parameter correlation: The batch header's correlation (its envelope count), for the log;
    ///   a client's batch is refused under correlation 0 (docs/PROTOCOL.md, 'Batches').
    @_spi(GroveInternal) public static func addressRefusal(_ count: Int, correlation: UInt64 = 0) -> WireError? {
        guard count != 0 else { return nil }
        return WireError(.malformedFrame, """
            a batch's address frame (frame 1) must be empty, as each envelope carries its own address; \
            got \(count) bytes. See docs/PROTOCOL.md, 'Batches'
            """, correlation: correlation)
    }

    /// The envelopes of a batch payload, in order.
    /// - Throws: ``WireError`` `malformed-frame` when an envelope is truncated, its address is
    ///   not UTF-8, its kind is unknown or is itself a batch.
    public static func unpack(_ payload: [UInt8]) throws(WireError) -> [WireMessage] {
        var messages: [WireMessage] = []
        for envelope in try envelopes(in: payload) { messages.append(try envelope.message(in: payload)) }
        return messages
    }

    /// The envelopes of a client's batch, whose header says it holds `count`: as
    /// ``envelopes(in:)``, also refusing a batch that holds none (it would get no reply at all)
    /// or another number than its header says. No more than `count` envelopes are read, so a
    /// header that counts fewer than the payload holds costs no more than one that is true
    /// (the count itself is bounded before: `limits.batchEnvelopes`).
    /// - Throws: ``WireError`` `malformed-frame`, saying which.
    public static func envelopes(in payload: [UInt8], count: UInt64) throws(WireError) -> [Envelope] {
        let (envelopes, complete) = try envelopes(in: payload, atMost: Int(clamping: count))
        guard complete else {
            throw WireError(.malformedFrame,
                "the batch header's correlation says \(count) envelope(s) but the payload holds more; set it to the number of envelopes (docs/PROTOCOL.md, 'Batches')")
        }
        guard !envelopes.isEmpty else {
            throw WireError(.malformedFrame,
                "the batch holds no envelopes, so nothing in it could be answered; send at least one (docs/PROTOCOL.md, 'Batches')")
        }
        guard envelopes.count == count else {
            throw WireError(.malformedFrame,
                "the batch header's correlation says \(count) envelope(s) but the payload holds \(envelopes.count); set it to the number of envelopes (docs/PROTOCOL.md, 'Batches')")
        }
        return envelopes
    }

    /// Where each envelope of a batch payload is, in order, checking the whole batch first so
    /// that a malformed batch is refused as a whole. Addresses are not checked to be UTF-8 yet.
    /// - Throws: ``WireError`` `malformed-frame` when an envelope is truncated, its kind is
    ///   unknown or is itself a batch.
    public static func envelopes(in payload: [UInt8]) throws(WireError) -> [Envelope] {
        try envelopes(in: payload, atMost: .max).envelopes
    }

    /// The first `limit` envelopes of a batch payload, and whether they are all of it.
    private static func envelopes(in payload: [UInt8], atMost limit: Int) throws(WireError) -> (envelopes: [Envelope], complete: Bool) {
        var envelopes: [Envelope] = []
        // Room at once rather than grown envelope by envelope (each growth an allocation and a
        // copy): at most one per 16 bytes (an envelope's least), `limit`, or 4,096, past which
        // it grows as before, so a large payload reserves no more than 4,096 can fill.
        envelopes.reserveCapacity(min(limit, payload.count / 16, 4096))
        var offset = 0
        func truncated() -> WireError {
            WireError(.malformedFrame,
                "batch envelope \(envelopes.count + 1) is truncated at byte \(offset); see docs/PROTOCOL.md, 'Batches'")
        }
        func number(_ bytes: Int) throws(WireError) -> Int {
            guard payload.count - offset >= bytes else { throw truncated() }
            var value = 0
            for index in offset ..< offset + bytes { value = value << 8 | Int(payload[index]) }
            offset += bytes
            return value
        }
        while offset < payload.count {
            guard envelopes.count < limit else { return (envelopes, false) }
            guard payload.count - offset >= 10 else { throw truncated() }
            let kindByte = payload[offset]
            let flags = payload[offset + 1]
            var correlation: UInt64 = 0
            for index in offset + 2 ..< offset + 10 { correlation = correlation << 8 | UInt64(payload[index]) }
            offset += 10
            guard let kind = MessageKind(rawValue: kindByte), kind != .batch else {
                throw WireError(.malformedFrame,
                    "batch envelope \(envelopes.count + 1) has kind 0x\(String(kindByte, radix: 16)), which is unknown or a nested batch",
                    correlation: correlation)
            }
            if let refusal = Header.undefinedFlags(flags, correlation: correlation, where: "batch envelope \(envelopes.count + 1)") {
                throw refusal
            }
            let addressCount = try number(2)
            guard payload.count - offset >= addressCount else { throw truncated() }
            let address = offset ..< offset + addressCount
            offset += addressCount
            let bodyCount = try number(4)
            guard payload.count - offset >= bodyCount else { throw truncated() }
            envelopes.append(Envelope(kind: kind, flags: Header.Flags(rawValue: flags), correlation: correlation,
                                      address: address, payload: offset ..< offset + bodyCount))
            offset += bodyCount
        }
        return (envelopes, true)
    }

    private static func appendBigEndian(_ value: UInt64, bytes: Int, to payload: inout [UInt8]) {
        withUnsafeBytes(of: value.bigEndian) { payload.append(contentsOf: $0[(8 - bytes)...]) }
    }
}
