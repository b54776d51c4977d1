public import GroveWire
import ZeroMQ

/// Subscribes to a coordinator's events endpoint: state changes, effect lifecycle, workers.
public final class Watcher {
    private let context: ZMQContext
    private let socket: Socket

    /// Subscribes to every topic starting with one of `prefixes` (all topics when empty), e.g.
    /// `state:auth`, `effect:`, `worker:`.
    /// - Throws: ``WireError`` `unreachable` when the endpoint is malformed.
    public init(endpoint: String, prefixes: [String] = []) throws(WireError) {
        do {
            context = try ZMQContext()
            socket = try Socket(context, .sub)
            try socket.setLinger(milliseconds: 0)
            try socket.setReceiveTimeout(milliseconds: 100)
            for prefix in prefixes.isEmpty ? [""] : prefixes { try socket.subscribe(Array(prefix.utf8)) }
            try socket.connect(endpoint)
        } catch {
            throw WireError(.unreachable, "cannot subscribe to \(endpoint): \(error)")
        }
    }

    deinit {
        socket.close()
        context.terminate()
    }

    /// The next published message within about 100 ms, or `nil`.
    public func next() -> (topic: String, message: WireMessage)? {
        guard let frames = try? socket.receive(dontWait: false), frames.count == 4,
              let message = try? WireMessage(frames: frames.dropFirst()) else { return nil }
        return (String(decoding: frames[0], as: UTF8.self), message)
    }
}
