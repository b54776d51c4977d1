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
    /// Holds messages sent while the runtime handles a batch, to post them in one go.
    let collector = OutboundCollector()
    /// Hosts woken while a received batch is queued, drained after it.
    let drains = DrainQueue()

    func send(_ message: WireMessage) {
        collector.send(Outbound(socket: socket, frames: message.frames), via: loop)
    }

    /// Collects what is sent from now until ``flush()``: one hand-off to the I/O thread (one
    /// wake-up, one batch message) for a whole received batch instead of one per reply.
    func beginCollecting() { collector.begin() }

    func flush() { collector.end(via: loop) }

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

/// The worker's I/O delegate: hands received batches to the runtime, and packs everything posted
/// for the coordinator in one loop turn into one batch message.
final class WorkerLoopDelegate: IOLoopDelegate {
    let onBatch: @Sendable ([Inbound]) -> Void

    init(onBatch: @escaping @Sendable ([Inbound]) -> Void) {
        self.onBatch = onBatch
    }

    func received(_ batch: [Inbound], io: LoopIO) { onBatch(batch) }

    func sendFailed(_ socket: SocketID, frames: [[UInt8]], error: ZMQError, io: LoopIO) {}

    func tick(io: LoopIO) {}

    func posted(_ messages: [Outbound], io: LoopIO) {
        guard let socket = messages.first?.socket else { return }
        // One socket per worker; well-formed three-frame messages only (all of ours are).
        let frames = messages.map(\.frames).filter { $0.count == 3 && $0[0].count == Header.size }
        var start = 0
        while start < frames.count {
            let end = min(frames.count, start + 4096)
            io.send(socket, Batch.pack(frames: Array(frames[start..<end])))
            start = end
        }
    }
}

/// Messages held back while a batch is handled; sends from other tasks meanwhile join them.
/// Posting happens under the same lock as collecting, so nothing sent later can overtake what
/// was held back: replies leave in the order they were sent.
final class OutboundCollector: Sendable {
    private let state = Mutex<(collecting: Bool, messages: [Outbound])>((false, []))

    func begin() { state.withLock { $0.collecting = true } }

    func send(_ message: Outbound, via loop: IOLoop) {
        state.withLock { state in
            if state.collecting {
                state.messages.append(message)
            } else {
                loop.post(message)
            }
        }
    }

    func end(via loop: IOLoop) {
        state.withLock { state in
            state.collecting = false
            if !state.messages.isEmpty { loop.post(contentsOf: state.messages) }
            state.messages.removeAll(keepingCapacity: true)
        }
    }
}
