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
    static func refusal(in outgoing: DirectRoute.Outgoing) -> (busy: Bool, moved: String?)? {
        switch outgoing {
        case .named(let frames): refusal(in: frames)
        case .reply(let kind, _, _, _, let payload): kind == .error ? refusal(inPayload: payload) : nil
        }
    }

    /// ``refusal(in:)-(DirectRoute.Outgoing)`` read off frames.
    static func refusal(in frames: [[UInt8]]) -> (busy: Bool, moved: String?)? {
        guard frames.count == 3 || frames.count == 4, let header = try? Header(frames[frames.count - 3]), header.kind == .error else {
            return nil
        }
        return refusal(inPayload: frames[frames.count - 1])
    }

    /// The refusal an `error` payload holds, if the metrics count it.
    private static func refusal(inPayload payload: [UInt8]) -> (busy: Bool, moved: String?)? {
        guard let error = try? WireJSON.decode(WireError.self, from: payload) else { return nil }
        if error.code == .busy { return (true, nil) }
        if error.code == .moved { return (false, error.reason?.rawValue ?? "none") }
        return nil
    }
}
