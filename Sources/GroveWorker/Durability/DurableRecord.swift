public import Grove
public import GroveRuntime
public import GroveWire

/// How a durable instance's snapshot is kept in its ``MachineRecord``: one byte for the codec,
/// then the snapshot (state, timers, io in flight, queued events) in GroveWire's binary codec,
/// or in JSON for a value the binary codec refuses; or, for an instance with nothing but its
/// state (the common case between events), the state alone in the binary codec.
///
/// A snapshot with io to re-issue (``Snapshot/reissuedIO``) is written under codec bytes of its
/// own (4 and 5), so that a Grove from before re-issue refuses the record (an unknown codec
/// byte) instead of reading it without that io, which would leave the machine waiting forever
/// for a result. A snapshot with postponed events likewise goes under 6 and 7 (whatever io it
/// re-issues), so that a Grove from before postpone does not drop them. Every other record
/// keeps the bytes it had, so stores written before open as they are.
@usableFromInline
enum DurableRecord {
    private static let binaryCodec: UInt8 = 1
    private static let jsonCodec: UInt8 = 2
    /// The state alone, binary: a snapshot with no timers, io, queued events or omitted effects.
    @usableFromInline static let stateAloneCodec: UInt8 = 3
    /// ``binaryCodec`` and ``jsonCodec`` for a snapshot with io to re-issue.
    private static let binaryReissuingCodec: UInt8 = 4
    private static let jsonReissuingCodec: UInt8 = 5
    /// ``binaryCodec`` and ``jsonCodec`` for a snapshot with postponed events
    /// (``Snapshot/postponed``), which a Grove from before postpone would drop unread.
    private static let binaryPostponingCodec: UInt8 = 6
    private static let jsonPostponingCodec: UInt8 = 7

    /// The record of an instance that holds only `state` (``MachineHost/holdsOnlyState``);
    /// nil when the binary codec refuses the state (the whole snapshot then goes in JSON).
    @inlinable
    static func encode<State: Encodable>(stateAlone state: State) -> [UInt8]? {
        var bytes: [UInt8] = [stateAloneCodec]
        do { try BinaryCodec.encode(state, into: &bytes) } catch { return nil }
        return bytes
    }

    @usableFromInline
    static func encode<M: Machine>(_ snapshot: Snapshot<M>) throws -> [UInt8] where M.State: Codable, M.Event: Codable {
        let (binary, json) = snapshot.postponed != nil ? (binaryPostponingCodec, jsonPostponingCodec)
            : snapshot.reissuedIO != nil ? (binaryReissuingCodec, jsonReissuingCodec) : (binaryCodec, jsonCodec)
        var bytes: [UInt8] = [binary]
        if try !IOBody.encode(snapshot, into: &bytes) { bytes[0] = json }
        return bytes
    }

    static func decode<M: Machine>(_ bytes: [UInt8], as machine: M.Type) throws -> Snapshot<M> where M.State: Codable, M.Event: Codable {
        guard let codec = bytes.first, (binaryCodec...jsonPostponingCodec).contains(codec) else {
            throw WireError(.malformedFrame, "the record starts with an unknown codec byte \(bytes.first.map { "\($0)" } ?? "(empty)"): "
                + "damaged, or written by a newer Grove, whose workers can read it")
        }
        if codec == stateAloneCodec {
            return Snapshot(state: try IOBody.decode(M.State.self, from: bytes[1...], binary: true,
                                                     what: "the stored state of a \(M.self)"))
        }
        return try IOBody.decode(Snapshot<M>.self, from: bytes[1...], binary: [binaryCodec, binaryReissuingCodec, binaryPostponingCodec].contains(codec),
                                 what: "the stored snapshot of a \(M.self)")
    }
}
