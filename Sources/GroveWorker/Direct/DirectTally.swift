import GroveCluster
@_spi(GroveInternal) import GroveWire

/// What the worker's metrics count of its direct road, read off the frames the I/O thread moves
/// (docs/ARCHITECTURE.md, "Metrics"): requests as they arrive, and the answers that send a
/// client elsewhere or back later (`moved` by reason, `busy`) as they leave. Pure.
enum DirectTally {
    /// How many requests a message received on the direct socket holds (its frames after the
    /// peer's routing id): a batch's envelopes each one, anything else one (a malformed message
    /// is answered too, so it counts).
    static func requests(in frames: ArraySlice<[UInt8]>) -> Int {
        guard let first = frames.first, let header = try? Header(first), header.kind == .batch else { return 1 }
        return Int(clamping: header.correlation)
    }

    /// A refusal the metrics count, in a message posted for the direct socket: `[peer, header,
    /// address, payload]` (answered by the core) or `[header, address, payload]` (a reply under
    /// a direct id). `nil` for anything else; only an `error` is decoded.
    static func refusal(in frames: [[UInt8]]) -> (busy: Bool, moved: String?)? {
        guard frames.count == 3 || frames.count == 4, let header = try? Header(frames[frames.count - 3]), header.kind == .error,
              let error = try? WireJSON.decode(WireError.self, from: frames[frames.count - 1]) else { return nil }
        if error.code == .busy { return (true, nil) }
        if error.code == .moved { return (false, error.reason?.rawValue ?? "none") }
        return nil
    }
}
