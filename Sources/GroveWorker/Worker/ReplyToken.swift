/// A waiting sender's reply as the one number a host keeps with the event
/// (``HostOptions/replyHandler``, which knows nothing of codecs): the request's correlation in
/// the low 63 bits, the event's codec in the top bit (set: GroveWire's binary codec). The
/// coordinator's ids never use the top bit (``CorrelationEpoch``), so every request it sends
/// has one; a correlation that does cannot share the number with its codec.
@usableFromInline
struct ReplyToken: Equatable, Sendable {
    /// What the host keeps.
    @usableFromInline
    let raw: UInt64

    @usableFromInline
    static let binaryBit: UInt64 = 1 << 63

    /// Nil when `correlation` needs the top bit.
    init?(correlation: UInt64, binary: Bool) {
        guard correlation & Self.binaryBit == 0 else { return nil }
        raw = correlation | (binary ? Self.binaryBit : 0)
    }

    /// The token a host hands back.
    @usableFromInline
    init(raw: UInt64) { self.raw = raw }

    @usableFromInline
    var correlation: UInt64 { raw & ~Self.binaryBit }
    @usableFromInline
    var binary: Bool { raw & Self.binaryBit != 0 }
}
