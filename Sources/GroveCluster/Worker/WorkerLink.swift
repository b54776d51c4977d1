import GroveWire
import ZeroMQ

/// A worker's way to the coordinator: posts messages to the process's I/O thread, which owns
/// the DEALER socket. Safe to use from any thread or task.
struct WorkerLink: Sendable {
    let worker: String
    let loop: IOLoop
    let socket: SocketID

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
