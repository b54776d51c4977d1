import GroveWire
import Synchronization
import ZeroMQ

/// A worker's way to the coordinator: posts messages to the process's I/O thread, which owns
/// the DEALER socket. Safe to use from any thread or task.
struct WorkerLink: Sendable {
    let worker: String
    let loop: IOLoop
    let socket: SocketID
    /// What watchers subscribe to; state changes nobody watches are not sent.
    let observation = WatchedTopics()

    func send(_ message: WireMessage) {
        loop.post(Outbound(socket: socket, frames: message.frames))
    }

    func send(_ kind: MessageKind, correlation: UInt64 = 0, address: String = "", payload: [UInt8] = []) {
        send(WireMessage(Header(kind, correlation: correlation), address: address, payload: payload))
    }

    /// Sends an observation (state change, output) for the coordinator to publish or route.
    func publish<T: Encodable>(_ kind: MessageKind, address: String, payload: T) {
        guard let bytes = try? WireJSON.encode(payload) else { return }
        send(kind, address: address, payload: bytes)
    }
}

/// The coordinator's current subscriptions, as `observe` messages report them.
final class WatchedTopics: Sendable {
    private let state = Mutex<(version: Int, observation: Observation)>((0, Observation(prefixes: [])))

    func update(_ observation: Observation) {
        state.withLock { $0 = ($0.version + 1, observation) }
    }

    /// A number that changes whenever the subscriptions do, so callers can cache `watches`.
    var version: Int { state.withLock { $0.version } }

    func watches(_ topic: String) -> Bool {
        state.withLock { $0.observation.watches(topic) }
    }
}
