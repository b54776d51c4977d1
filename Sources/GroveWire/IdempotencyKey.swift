/// What makes a resent event safe: the id of the client that sent it and the client's sequence
/// number for it. An `event` whose header has ``Header/Flags/keyed`` (bit 4) carries one in front
/// of its payload (after the trace context, when it has one):
///
/// ```
/// offset size
/// 0      1    n, the client id's length, 1 to 64
/// 1      n    the client id: bytes the client chose once (a random 128-bit value, say)
/// 1+n    8    the sequence, unsigned, big-endian, 1 or more: one per event the client sends
/// 9+n    ...  the payload proper
/// ```
///
/// A client numbers the events it sends to each address 1, 2, 3…: the worker then remembers
/// which of them an instance applied in a few words, however many there were.
///
/// The worker keeps the recent keys of each instance with their answers, and which sequences of
/// each client it applied (durable machines in their store, in the commit of the state): an event
/// whose key it applied already is answered with the first answer, or refused `already-applied`
/// once that answer is no longer kept, and never applied again (docs/PROTOCOL.md, "Idempotency
/// keys").
public struct IdempotencyKey: Sendable, Hashable, CustomStringConvertible {
    /// The longest client id, in bytes.
    public static let maximumClientLength = 64
    /// The sequence no key has: the worker stores a client's record under it.
    public static let reservedSequence: UInt64 = 0
    /// How many runs of a client's sequences an instance keeps open under the highest it
    /// applied (events not applied yet: lost, refused `busy`, on their way again). A client that
    /// keeps at most this many keyed events unanswered per address (in flight or waiting to be
    /// sent again) never has a key it did not give up on refused `key-too-old`.
    public static let openRunsKept = 64

    public let client: [UInt8]
    public let sequence: UInt64

    /// A key of `client` (1 to ``maximumClientLength`` bytes as a client sends it, up to
    /// ``maximumBoundClientLength`` once bound to its sender, ``bound(_:flags:to:correlation:)``)
    /// and `sequence`.
    public init(client: [UInt8], sequence: UInt64) {
        precondition((1...Self.maximumBoundClientLength).contains(client.count), "a client id of 1 to \(Self.maximumBoundClientLength) bytes")
        self.client = client
        self.sequence = sequence
    }

    /// The client id in hex (it is bytes the client chose), and the sequence: for logs and errors.
    public var description: String {
        client.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined() + "#\(sequence)"
    }

    /// Splits a payload whose header has ``Header/Flags/keyed`` (the trace context already split
    /// off): the key and the payload proper.
    /// - Parameter longest: The longest client id taken: ``maximumClientLength`` from a client,
    ///   ``maximumBoundClientLength`` where ids were bound to their senders on the way.
    /// - Throws: ``WireError`` `malformed-frame`, naming the payload frame, when the client id's
    ///   length is 0 or over `longest`, or the key runs past the payload.
    public static func split(_ payload: ArraySlice<UInt8>, correlation: UInt64 = 0, longest: Int = maximumClientLength)
        throws(WireError) -> (key: IdempotencyKey, body: ArraySlice<UInt8>) {
        let length = try clientLength(of: payload, correlation: correlation, longest: longest)
        let start = payload.startIndex + 1
        return (IdempotencyKey(client: Array(payload[start ..< start + length]), sequence: sequence(in: payload, clientLength: length)),
                payload[(start + length + 8)...])
    }

    /// The length of the client id of the key `payload` starts with, once the key is checked.
    /// - Throws: ``WireError`` `malformed-frame` as ``split(_:correlation:longest:)`` does.
    static func clientLength<Bytes: Collection<UInt8>>(of payload: Bytes, correlation: UInt64, longest: Int = maximumClientLength)
        throws(WireError) -> Int where Bytes.Index == Int {
        guard let length = payload.first.map(Int.init) else {
            throw malformed("the payload is empty", correlation: correlation)
        }
        guard (1...longest).contains(length) else {
            throw malformed("its client id length byte says \(length); a client id has 1 to \(longest) bytes",
                            correlation: correlation)
        }
        guard payload.count >= 1 + length + 8 else {
            throw malformed("the key needs \(1 + length + 8) bytes (length, client id, 8-byte sequence) but the payload has \(payload.count)",
                            correlation: correlation)
        }
        guard sequence(in: payload, clientLength: length) != reservedSequence else {
            throw malformed("its sequence is 0, which no key has; number a client's events to an address from 1", correlation: correlation)
        }
        return length
    }

    private static func sequence<Bytes: Collection<UInt8>>(in payload: Bytes, clientLength length: Int) -> UInt64 where Bytes.Index == Int {
        let start = payload.startIndex + 1 + length
        var sequence: UInt64 = 0
        for byte in payload[start ..< start + 8] { sequence = sequence << 8 | UInt64(byte) }
        return sequence
    }

    static func malformed(_ what: String, correlation: UInt64) -> WireError {
        WireError(.malformedFrame,
            "frame 2 (the payload) of this event has flag bit 4 (keyed), so it must start with an idempotency key, but \(what); "
            + "send one byte n (1 to \(maximumClientLength)), n bytes of client id, the 8-byte sequence (1 or more), then the event, or clear the flag "
            + "(docs/PROTOCOL.md, 'Idempotency keys')",
            correlation: correlation)
    }

    /// Appends this key's prefix to a payload under construction; write the payload proper
    /// after it, and set ``Header/Flags/keyed``.
    public func write(into payload: inout [UInt8]) {
        payload.append(UInt8(client.count))
        payload.append(contentsOf: client)
        for shift in stride(from: 56, through: 0, by: -8) { payload.append(UInt8(truncatingIfNeeded: sequence >> UInt64(shift))) }
    }

    /// `payload` with this key's prefix in front.
    public func prefixed(_ payload: some Collection<UInt8>) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(9 + client.count + payload.count)
        write(into: &out)
        out.append(contentsOf: payload)
        return out
    }

    /// A new client id: 16 random bytes, what a client process picks once.
    public static func randomClient() -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<16).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    }
}
