@_spi(GroveInternal) import GroveWire

/// The id a worker gives a request that came on its direct route (docs/DIRECT-ROUTES.md 1.7 and
/// 2.7): ``CorrelationEpoch/direct`` in the epoch's bits, which no coordinator issues, and in the
/// 40 bits below it the sender's number (the client key's, as the coordinator's `access` numbers
/// it; 0 for none) over a wrapping sequence. The id is what the worker's flight log records for
/// the run, so a crash report names who sent the event without a field of its own, and the
/// coordinator, which never saw the request, can still count it against the key.
package enum DirectRequestID {
    /// Bits for the sequence; the sender's number takes the 16 above them.
    @usableFromInline static let sequenceBits: UInt64 = 24
    package static let sequenceMask: UInt64 = (1 << sequenceBits) - 1
    /// The largest sender number an id carries; a larger one is written as 0 (unknown).
    package static let largestSender: UInt32 = 0xFFFF

    /// The id of the `sequence`th direct request (modulo 2^24) from sender `number`.
    @inlinable
    package static func make(sender number: UInt32, sequence: UInt64) -> UInt64 {
        let sender = number <= largestSender ? UInt64(number) : 0
        return CorrelationEpoch.direct.id(sender << sequenceBits | sequence & sequenceMask)
    }

    /// Whether `id` is a direct request's (its epoch is ``CorrelationEpoch/direct``).
    @inlinable
    package static func isDirect(_ id: UInt64) -> Bool {
        CorrelationEpoch.of(id) == CorrelationEpoch.direct.value
    }

    /// The sender's number a direct request's `id` carries; `nil` when it is not a direct id or
    /// carries none.
    package static func sender(of id: UInt64) -> UInt32? {
        guard isDirect(id) else { return nil }
        let number = UInt32((id & CorrelationEpoch.counterMask) >> sequenceBits)
        return number == 0 ? nil : number
    }
}
