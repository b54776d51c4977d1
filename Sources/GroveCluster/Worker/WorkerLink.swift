import GroveWire
import Synchronization
import ZeroMQ

/// A worker's way to the coordinator: posts messages to the process's I/O thread, which owns
/// the DEALER socket. Safe to use from any thread or task. A class, so the many closures that
/// answer requests capture one reference.
@usableFromInline
final class WorkerLink: Sendable {
    let worker: String
    let loop: IOLoop
    let socket: SocketID
    /// What watchers subscribe to; state changes nobody watches are not sent.
    let observation = WatchedTopics()
    /// Holds messages sent while the runtime handles a batch, to post them in one go.
    let collector = OutboundCollector()
    /// Hosts woken while a received batch is queued, drained after it.
    let drains = DrainQueue()
    /// Durable instances that changed or ended since the last write to the store.
    let durable = DurableWrites()
    /// The audit log of the audited machines' transitions, and the lines waiting for it.
    let audit = AuditSink()
    /// The way into the worker's core for what machines send on their own (io calls to other
    /// workers, outputs).
    let toCore = CoreInlet()
    /// Whether what the machines send may leave: open only while the coordinator's welcome
    /// holds (the core says when).
    let outflow = OutflowGate()
    /// The flight recorder and the quarantined events (poison events).
    let poison = PoisonWatch()
    /// The instances that ended since the runtime last applied their machines' `onEnd`.
    let endings = EndedInstances()

    init(worker: String, loop: IOLoop, socket: SocketID) {
        self.worker = worker
        self.loop = loop
        self.socket = socket
    }

    func send(_ message: WireMessage) {
        send(message.header.kind, flags: message.header.flags, correlation: message.header.correlation,
             address: message.address, payload: message.payload)
    }

    /// Sends one message given by its parts; while a batch is handled it joins the batch of
    /// replies as bytes, without becoming a message of its own. Only `register` leaves while
    /// ``outflow`` is closed.
    func send(_ kind: MessageKind, flags: Header.Flags = [], correlation: UInt64 = 0, address: String = "",
              payload: some Collection<UInt8> = EmptyCollection()) {
        guard kind == .register || outflow.passes() else { return }
        collector.send(kind, flags: flags, correlation: correlation, address: address, payload: payload, socket: socket, via: loop)
    }

    /// Collects what is sent from now until ``flush()``: one hand-off to the I/O thread (one
    /// wake-up, one batch message) for a whole received batch instead of one per reply.
    func beginCollecting() { collector.begin() }

    func flush() { collector.end(socket: socket, via: loop) }

    /// Sends a message whose payload `write` appends in place: while a batch is handled, straight
    /// into the batch of replies. Nothing is sent when `write` throws.
    func send<Failure: Error>(_ kind: MessageKind, flags: Header.Flags, correlation: UInt64, address: String,
                              writingPayload write: (inout [UInt8]) throws(Failure) -> Void) throws(Failure) {
        guard outflow.passes() else { return }
        try collector.send(kind, flags: flags, correlation: correlation, address: address, writingPayload: write,
                           socket: socket, via: loop)
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
        // Alone in its turn (a batch of replies, under load): it leaves as it is, not copied.
        if messages.count == 1 {
            if messages[0].frames.count == 3 { io.send(socket, messages[0].frames) }
            return
        }
        // One socket per worker; well-formed three-frame messages only (all of ours are). What
        // was posted in this loop turn leaves as one batch (several past 1 MiB), in the order
        // posted; posted batches are merged into it, since batches do not nest.
        var batch = BatchBuilder()
        for message in messages {
            let frames = message.frames
            guard frames.count == 3, let header = try? Header(frames[0]) else { continue }
            if header.kind == .batch {
                batch.append(envelopes: frames[2], count: Int(header.correlation))
            } else {
                batch.append(kind: header.kind, flags: header.flags, correlation: header.correlation,
                             address: frames[1], payload: frames[2])
            }
            if batch.byteCount >= BatchBuilder.preferredByteCount {
                io.send(socket, batch.frames())
                batch = BatchBuilder()
            }
        }
        if !batch.isEmpty { io.send(socket, batch.frames()) }
    }
}

/// Replies held back while a batch is handled, as one batch under construction; sends from
/// other tasks meanwhile join it. Posting happens under the same lock as collecting, so nothing
/// sent later can overtake what was held back: replies leave in the order they were sent.
final class OutboundCollector: Sendable {
    private let state = Mutex<(collecting: Bool, batch: BatchBuilder)>((false, BatchBuilder()))

    func begin() { state.withLock { $0.collecting = true } }

    func send(_ kind: MessageKind, flags: Header.Flags, correlation: UInt64, address: String,
              payload: some Collection<UInt8>, socket: SocketID, via loop: IOLoop) {
        state.withLock { state in
            if state.collecting {
                state.batch.append(kind: kind, flags: flags, correlation: correlation, address: address.utf8, payload: payload)
                if state.batch.byteCount >= BatchBuilder.preferredByteCount {
                    loop.post(Outbound(socket: socket, frames: state.batch.frames()))
                    state.batch = BatchBuilder()
                }
            } else {
                loop.post(Outbound(socket: socket, frames: [Header(kind, flags: flags, correlation: correlation).bytes,
                                                            Array(address.utf8), Array(payload)]))
            }
        }
    }

    func send<Failure: Error>(_ kind: MessageKind, flags: Header.Flags, correlation: UInt64, address: String,
                              writingPayload write: (inout [UInt8]) throws(Failure) -> Void,
                              socket: SocketID, via loop: IOLoop) throws(Failure) {
        try state.withLock { state throws(Failure) in
            if state.collecting {
                try state.batch.append(kind: kind, flags: flags, correlation: correlation, address: address.utf8,
                                       writingPayload: write)
                if state.batch.byteCount >= BatchBuilder.preferredByteCount {
                    loop.post(Outbound(socket: socket, frames: state.batch.frames()))
                    state.batch = BatchBuilder()
                }
            } else {
                var payload: [UInt8] = []
                try write(&payload)
                loop.post(Outbound(socket: socket, frames: [Header(kind, flags: flags, correlation: correlation).bytes,
                                                            Array(address.utf8), payload]))
            }
        }
    }

    func end(socket: SocketID, via loop: IOLoop) {
        state.withLock { state in
            state.collecting = false
            guard !state.batch.isEmpty else { return }
            loop.post(Outbound(socket: socket, frames: state.batch.frames()))
            state.batch = BatchBuilder()
        }
    }
}
