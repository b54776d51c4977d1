public import Grove
public import GroveRuntime
public import GroveWire

/// How a durable instance's snapshot is kept in its ``MachineRecord``: one byte for the codec,
/// then the snapshot (state, timers, io in flight, queued events) in GroveWire's binary codec,
/// or in JSON for a value the binary codec refuses; or, for an instance with nothing but its
/// state (the common case between events), the state alone in the binary codec.
@usableFromInline
enum DurableRecord {
    private static let binaryCodec: UInt8 = 1
    private static let jsonCodec: UInt8 = 2
    /// The state alone, binary: a snapshot with no timers, io, queued events or omitted effects.
    @usableFromInline static let stateAloneCodec: UInt8 = 3

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
        var bytes: [UInt8] = [binaryCodec]
        if try !IOBody.encode(snapshot, into: &bytes) { bytes[0] = jsonCodec }
        return bytes
    }

    static func decode<M: Machine>(_ bytes: [UInt8], as machine: M.Type) throws -> Snapshot<M> where M.State: Codable, M.Event: Codable {
        guard let codec = bytes.first, codec == binaryCodec || codec == jsonCodec || codec == stateAloneCodec else {
            throw WireError(.malformedFrame, "the record starts with an unknown codec byte \(bytes.first.map { "\($0)" } ?? "(empty)")")
        }
        if codec == stateAloneCodec {
            return Snapshot(state: try IOBody.decode(M.State.self, from: bytes[1...], binary: true,
                                                     what: "the stored state of a \(M.self)"))
        }
        return try IOBody.decode(Snapshot<M>.self, from: bytes[1...], binary: codec == binaryCodec,
                                 what: "the stored snapshot of a \(M.self)")
    }
}
