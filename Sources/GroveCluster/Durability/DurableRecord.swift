import Grove
import GroveRuntime
import GroveWire

/// How a durable instance's snapshot is kept in its ``MachineRecord``: one byte for the codec,
/// then the snapshot (state, timers, io in flight, queued events) in GroveWire's binary codec,
/// or in JSON for a value the binary codec refuses.
enum DurableRecord {
    private static let binaryCodec: UInt8 = 1
    private static let jsonCodec: UInt8 = 2

    static func encode<M: Machine>(_ snapshot: Snapshot<M>) throws -> [UInt8] where M.State: Codable, M.Event: Codable {
        var bytes: [UInt8] = [binaryCodec]
        if try !IOBody.encode(snapshot, into: &bytes) { bytes[0] = jsonCodec }
        return bytes
    }

    static func decode<M: Machine>(_ bytes: [UInt8], as machine: M.Type) throws -> Snapshot<M> where M.State: Codable, M.Event: Codable {
        guard let codec = bytes.first, codec == binaryCodec || codec == jsonCodec else {
            throw WireError(.malformedFrame, "the record starts with an unknown codec byte \(bytes.first.map { "\($0)" } ?? "(empty)")")
        }
        return try IOBody.decode(Snapshot<M>.self, from: bytes[1...], binary: codec == binaryCodec,
                                 what: "the stored snapshot of a \(M.self)")
    }
}
