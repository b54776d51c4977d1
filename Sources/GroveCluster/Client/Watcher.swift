public import GroveWire
import ZeroMQ

/// Subscribes to a coordinator's events endpoint: state changes, effect lifecycle, workers.
public final class Watcher {
    private let context: ZMQContext
    private let socket: Socket

    /// Subscribes to every topic starting with one of `prefixes` (all topics when empty), e.g.
    /// `state:auth`, `effect:`, `worker:`.
    /// - Parameters:
    ///   - endpoint: The coordinator's events endpoint as this host reaches it; see
    ///     ``ClientEndpoint/connectable(_:via:)`` for turning a listing's `events` into one.
    ///   - prefixes: Topic prefixes; empty for every topic.
    ///   - credentials: The keys for a coordinator that speaks CURVE (a client key whose `read`
    ///     role covers every machine); `nil` for one that does not.
    /// - Throws: ``WireError`` `invalid-endpoint` when ZeroMQ refuses the endpoint, `unreachable`
    ///   when the socket cannot be set up.
    public init(endpoint: String, prefixes: [String] = [], credentials: Credentials? = nil) throws(WireError) {
        do {
            context = try ZMQContext()
            socket = try Socket(context, .sub)
            try socket.setLinger(milliseconds: 0)
            try socket.setReceiveHighWaterMark(100_000) // a watcher that falls behind loses publications, never blocks the coordinator
            try socket.setReceiveTimeout(milliseconds: 100)
            try credentials?.apply(to: socket)
            for prefix in prefixes.isEmpty ? [""] : prefixes { try socket.subscribe(Array(prefix.utf8)) }
        } catch {
            throw WireError(.unreachable, "cannot create a socket to subscribe to \(endpoint): \(error)")
        }
        do {
            try socket.connect(endpoint)
        } catch {
            throw ClientEndpoint.connectError(error, endpoint: endpoint, doing: "subscribe to")
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
