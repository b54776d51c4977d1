@_spi(GroveInternal) import GroveWire
import Logging
import Synchronization
import ZeroMQ

/// A worker's socket to the coordinator, and nothing else: posts messages to the process's I/O
/// thread, which owns the DEALER socket, holding them back while a turn collects them
/// (``OutboundCollector``) and dropping them while the session is not welcomed
/// (``OutflowGate``). Safe to use from any thread or task. A class, so the many closures that
/// answer requests capture one reference.
///
/// What else a host needs it is given by name when it is made (``Hosted``): the turn it notes
/// its changes in, the poison watch, the way into the core.
@usableFromInline
final class WorkerLink: Sendable {
    let worker: String
    let loop: WorkerLoop
    let socket: SocketID
    /// What a turn holds back until it ends (``Turn``), then sends as one batch message.
    let outbound: OutboundCollector
    /// Whether what the machines send may leave: open only while the coordinator's welcome
    /// holds (the core says when).
    let outflow = OutflowGate()
    /// What the topology's metrics count here; off unless the welcome asks (``WorkerMetrics``).
    let metrics = WorkerMetrics()
    /// The direct endpoint, for a worker that serves direct routes: replies under a
    /// ``CorrelationEpoch/direct`` id go there, not to the coordinator.
    let direct: DirectRoute?

    init(worker: String, loop: WorkerLoop, socket: SocketID, direct: DirectRoute? = nil, log: Logger = Logger(label: "grove.worker")) {
        outbound = OutboundCollector(log: log)
        self.worker = worker
        self.loop = loop
        self.socket = socket
        self.direct = direct
    }

    /// Whether a message is a reply to a direct request: its correlation is a
    /// ``CorrelationEpoch/direct`` id (a shift and a compare), and it is a reply's kind (a
    /// registration's correlation is a random incarnation).
    @inline(__always)
    static func isDirectReply(_ kind: MessageKind, correlation: UInt64) -> Bool {
        CorrelationEpoch.of(correlation) == CorrelationEpoch.direct.value && (kind == .state || kind == .accepted || kind == .error)
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
        // A direct request's reply goes to its client whatever the session: the request was
        // taken while it held, and what it ran is true.
        if let direct, Self.isDirectReply(kind, correlation: correlation) {
            return direct.reply(kind, flags: flags, correlation: correlation, address: address, payload: payload)
        }
        guard kind == .register || outflow.passes() else { return }
        outbound.send(kind, flags: flags, correlation: correlation, address: address, payload: payload, socket: socket, via: loop)
    }

    /// Sends what the turn collected since it began (``Turn/begin(collectingWoken:)``): one
    /// hand-off to the I/O thread (one wake-up, one batch message) for a whole received batch
    /// instead of one per reply.
    func flush() {
        outbound.end(socket: socket, via: loop)
        direct?.end()
    }

    /// The coordinator's frame limit, from its welcome (``OutboundLimit``).
    var messageBytes: Int {
        get { outbound.messageBytes }
        set { outbound.messageBytes = newValue }
    }

    /// The most envelopes a batch to the coordinator may hold, from its welcome (``OutboundLimit``).
    var batchEnvelopes: Int {
        get { outbound.batchEnvelopes }
        set { outbound.batchEnvelopes = newValue }
    }

    /// Sends a message whose payload `write` appends in place: while a batch is handled, straight
    /// into the batch of replies. Nothing is sent when `write` throws.
    func send<Failure: Error>(_ kind: MessageKind, flags: Header.Flags, correlation: UInt64, address: String,
                              writingPayload write: (inout [UInt8]) throws(Failure) -> Void) throws(Failure) {
        if let direct, Self.isDirectReply(kind, correlation: correlation) {
            var payload: [UInt8] = []
            try write(&payload)
            return direct.reply(kind, flags: flags, correlation: correlation, address: address, payload: payload)
        }
        guard outflow.passes() else { return }
        try outbound.send(kind, flags: flags, correlation: correlation, address: address, writingPayload: write,
                           socket: socket, via: loop)
    }

    /// Sends an observation (state change, output) for the coordinator to publish or route.
    func publish<T: Encodable>(_ kind: MessageKind, address: String, payload: T) {
        guard let bytes = try? WireJSON.encode(payload) else { return }
        send(kind, address: address, payload: bytes)
    }
}

/// The worker's I/O delegate: hands received batches to the runtime, and packs everything posted
/// for the coordinator in one loop turn into one batch message. With a direct endpoint it splits
/// what arrives by socket: ZAP requests answered, direct requests handed to the runtime with
/// their clients' backlogs, the rest the coordinator's; and what is posted for the direct socket
/// goes to its clients (``DirectRoute/send(_:io:)``).
final class WorkerLoopDelegate: IOLoopDelegate {
    /// A worker's direct endpoint: its route, the ZAP handler's socket, where its requests go.
    struct DirectSockets {
        let route: DirectRoute
        let zap: SocketID
        let onRequests: @Sendable ([DirectInbound]) -> Void
        /// Where the direct road's requests and refusals are counted (``DirectTally``).
        var metrics: WorkerMetrics?
    }

    let onBatch: @Sendable ([Inbound]) -> Void
    /// The coordinator's frame limit now (``OutboundCollector/messageBytes``): a batch made of
    /// what was posted leaves before it would pass it.
    let messageBytes: @Sendable () -> Int
    /// The coordinator's bound on a batch's envelopes now (``OutboundCollector/batchEnvelopes``):
    /// a batch made of what was posted leaves before it would pass it.
    let batchEnvelopes: @Sendable () -> Int
    let direct: DirectSockets?

    init(onBatch: @escaping @Sendable ([Inbound]) -> Void, messageBytes: @escaping @Sendable () -> Int = { OutboundLimit().messageBytes },
         batchEnvelopes: @escaping @Sendable () -> Int = { OutboundLimit().batchEnvelopes }, direct: DirectSockets? = nil) {
        self.onBatch = onBatch
        self.messageBytes = messageBytes
        self.batchEnvelopes = batchEnvelopes
        self.direct = direct
    }

    func received(_ batch: [Inbound], io: LoopIO) {
        guard let direct else { return onBatch(batch) }
        var coordinator: [Inbound] = []
        var requests: [DirectInbound] = []
        for inbound in batch {
            if inbound.socket == direct.zap {
                direct.route.answer(zapRequest: inbound.frames, on: direct.zap, io: io)
            } else if inbound.socket == direct.route.socket {
                guard let peer = inbound.frames.first else { continue }
                if let metrics = direct.metrics, metrics.isOn { metrics.directRequests(DirectTally.requests(in: inbound.frames.dropFirst())) }
                requests.append(DirectInbound(peer: peer, userID: inbound.userID ?? "", backlog: direct.route.backlogOf(peer, io: io),
                                              frames: inbound.frames.dropFirst(), frameCount: inbound.frameCount - 1))
            } else {
                coordinator.append(inbound)
            }
        }
        if !coordinator.isEmpty { onBatch(coordinator) }
        if !requests.isEmpty { direct.onRequests(requests) }
    }

    func sendFailed(_ socket: SocketID, frames: [[UInt8]], error: ZMQError, io: LoopIO) {
        // A direct client that went away is owed nothing more.
        if let direct, socket == direct.route.socket, let peer = frames.first { direct.route.forget(peer) }
    }

    func tick(io: LoopIO) { direct?.route.releaseBusies(io: io) }

    func drained(_ socket: SocketID, io: LoopIO) {
        if let direct, socket == direct.route.socket { direct.route.releaseBusies(io: io) }
    }

    func posted(_ messages: [Outbound], io: LoopIO) {
        guard let direct, messages.contains(where: { $0.socket == direct.route.socket }) else { return postToCoordinator(messages, io: io) }
        postToCoordinator(messages.filter { $0.socket != direct.route.socket }, io: io)
        // What is posted for the direct socket is a wake-up: the route hands over what is ready
        // (it batches replies per client), and refusals are counted here.
        let ready = direct.route.takeReady()
        if let counting = direct.metrics?.isOn == true ? direct.metrics : nil {
            for outgoing in ready {
                if let refusal = DirectTally.refusal(in: outgoing) {
                    counting.directRefused(busy: refusal.busy, movedBecause: refusal.moved)
                }
            }
        }
        direct.route.send(ready, io: io)
    }

    private func postToCoordinator(_ messages: [Outbound], io: LoopIO) {
        guard let socket = messages.first?.socket else { return }
        // Alone in its turn (a batch of replies, under load): it leaves as it is, not copied.
        if messages.count == 1 {
            if messages[0].frames.count == 3 { io.send(socket, messages[0].frames) }
            return
        }
        // One socket per worker; well-formed three-frame messages only (all of ours are). What
        // was posted in this loop turn leaves as one batch (several past 1 MiB, or past the
        // coordinator's frame limit), in the order posted; posted batches are merged into it,
        // since batches do not nest. Each posted message passed the limit on its own.
        let limit = OutboundLimit(messageBytes: messageBytes(), batchEnvelopes: batchEnvelopes())
        var batch = BatchBuilder()
        for message in messages {
            let frames = message.frames
            guard frames.count == 3, let header = try? Header(frames[0]) else { continue }
            let adding = header.kind == .batch ? frames[2].count : OutboundLimit.envelopeBytes(address: frames[1].count, payload: frames[2].count)
            // A posted batch was cut at the bound itself (``OutboundCollector``).
            let envelopes = header.kind == .batch ? Int(clamping: header.correlation) : 1
            if limit.startsNewBatch(at: batch.byteCount, adding: adding) || batch.count + envelopes > limit.batchEnvelopes {
                io.send(socket, batch.frames())
                batch = BatchBuilder()
            }
            if header.kind == .batch {
                batch.append(envelopes: frames[2], count: Int(header.correlation))
            } else {
                batch.append(kind: header.kind, flags: header.flags, correlation: header.correlation,
                             address: frames[1], payload: frames[2])
            }
            if limit.isFull(batch) {
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
///
/// Every message passes ``OutboundLimit`` on its way: one the coordinator would refuse for its
/// size is replaced (a reply, by `reply-too-large` under its correlation) or dropped, and a
/// batch leaves before an envelope would take it past the limit.
final class OutboundCollector: Sendable {
    private struct State {
        var collecting = false
        var batch = BatchBuilder()
        var limit = OutboundLimit()
    }

    private let state = Mutex(State())
    private let log: Logger

    init(log: Logger = Logger(label: "grove.worker")) {
        self.log = log
    }

    /// The coordinator's frame limit, from its welcome.
    var messageBytes: Int {
        get { state.withLock { $0.limit.messageBytes } }
        set { state.withLock { $0.limit.messageBytes = newValue } }
    }

    /// The coordinator's bound on a batch's envelopes, from its welcome.
    var batchEnvelopes: Int {
        get { state.withLock { $0.limit.batchEnvelopes } }
        set { state.withLock { $0.limit.batchEnvelopes = newValue } }
    }

    func begin() { state.withLock { $0.collecting = true } }

    func send(_ kind: MessageKind, flags: Header.Flags, correlation: UInt64, address: String,
              payload: some Collection<UInt8>, socket: SocketID, via loop: WorkerLoop) {
        let warning = state.withLock { state -> String? in
            // Nearly every message fits: it goes without a decision made for it.
            if state.limit.fits(addressBytes: address.utf8.count, payloadBytes: payload.count) {
                Self.put(kind, flags: flags, correlation: correlation, address: address, payload: payload, into: &state,
                         socket: socket, via: loop)
                return nil
            }
            let decision = state.limit.check(kind, address: address, payloadBytes: payload.count)
            Self.follow(decision.verdict, kind, flags: flags, correlation: correlation, address: address, payload: payload,
                        into: &state, socket: socket, via: loop)
            return decision.warning
        }
        if let warning { log.warning("\(warning)") }
    }

    /// Does what the limit decided for one message: sends it, sends its replacement, or nothing.
    private static func follow(_ verdict: OutboundLimit.Verdict, _ kind: MessageKind, flags: Header.Flags, correlation: UInt64,
                               address: String, payload: some Collection<UInt8>, into state: inout State, socket: SocketID,
                               via loop: WorkerLoop) {
        switch verdict {
        case .send:
            put(kind, flags: flags, correlation: correlation, address: address, payload: payload, into: &state, socket: socket, via: loop)
        case .replace(let replacement, let bytes):
            put(replacement, flags: [], correlation: correlation, address: address, payload: bytes, into: &state, socket: socket, via: loop)
        case .drop:
            break
        }
    }

    /// Sends one message that passed the limit: into the batch when collecting (the batch
    /// leaving first when the message would take it over the limit), else on its own.
    private static func put(_ kind: MessageKind, flags: Header.Flags, correlation: UInt64, address: String,
                            payload: some Collection<UInt8>, into state: inout State, socket: SocketID, via loop: WorkerLoop) {
        guard state.collecting else {
            loop.post(Outbound(socket: socket, frames: [Header(kind, flags: flags, correlation: correlation).bytes,
                                                        Array(address.utf8), Array(payload)]))
            return
        }
        let envelope = OutboundLimit.envelopeBytes(address: address.utf8.count, payload: payload.count)
        if state.limit.startsNewBatch(at: state.batch.byteCount, adding: envelope) {
            loop.post(Outbound(socket: socket, frames: state.batch.frames()))
            state.batch = BatchBuilder()
        }
        state.batch.append(kind: kind, flags: flags, correlation: correlation, address: address.utf8, payload: payload)
        postIfFull(&state, socket: socket, via: loop)
    }

    private static func postIfFull(_ state: inout State, socket: SocketID, via loop: WorkerLoop) {
        if state.limit.isFull(state.batch) {
            loop.post(Outbound(socket: socket, frames: state.batch.frames()))
            state.batch = BatchBuilder()
        }
    }

    func send<Failure: Error>(_ kind: MessageKind, flags: Header.Flags, correlation: UInt64, address: String,
                              writingPayload write: (inout [UInt8]) throws(Failure) -> Void,
                              socket: SocketID, via loop: WorkerLoop) throws(Failure) {
        let warning = try state.withLock { state throws(Failure) -> String? in
            guard state.collecting else {
                var payload: [UInt8] = []
                try write(&payload)
                let decision = state.limit.check(kind, address: address, payloadBytes: payload.count)
                Self.follow(decision.verdict, kind, flags: flags, correlation: correlation, address: address, payload: payload,
                            into: &state, socket: socket, via: loop)
                return decision.warning
            }
            // Written straight into the batch: its size is known only once it is there.
            let start = state.batch.byteCount
            try state.batch.append(kind: kind, flags: flags, correlation: correlation, address: address.utf8,
                                   writingPayload: write)
            let envelope = state.batch.byteCount - start
            if envelope <= state.limit.messageBytes, !state.limit.startsNewBatch(at: start, adding: envelope) {
                // It fits, and so does the batch: nothing to decide.
                Self.postIfFull(&state, socket: socket, via: loop)
                return nil
            }
            let decision = state.limit.check(kind, address: address,
                                             payloadBytes: envelope - OutboundLimit.envelopeBytes(address: address.utf8.count, payload: 0))
            switch decision.verdict {
            case .send:
                if state.limit.startsNewBatch(at: start, adding: envelope) {
                    let moved = state.batch.removeLast(startingAt: start)
                    loop.post(Outbound(socket: socket, frames: state.batch.frames()))
                    state.batch = BatchBuilder()
                    state.batch.append(envelopes: moved, count: 1)
                }
                Self.postIfFull(&state, socket: socket, via: loop)
            case .replace(let replacement, let bytes):
                _ = state.batch.removeLast(startingAt: start)
                Self.put(replacement, flags: [], correlation: correlation, address: address, payload: bytes, into: &state,
                         socket: socket, via: loop)
            case .drop:
                _ = state.batch.removeLast(startingAt: start)
            }
            return decision.warning
        }
        if let warning { log.warning("\(warning)") }
    }

    /// Replaces the replies held back for `addresses` (`state` and `accepted`: what says an
    /// event or request ran) by `error`'s for the same correlation: the turn's commit did not
    /// keep what they ran (handoff: another worker owns them now). Only what this turn still
    /// holds; a batch that already left (past ``BatchBuilder/preferredByteCount``) is gone.
    /// - Returns: How many replies were replaced.
    @discardableResult
    func withdraw(repliesTo addresses: Set<String>, with error: (String) -> WireError) -> Int {
        state.withLock { state in
            guard state.collecting, !state.batch.isEmpty, !addresses.isEmpty else { return 0 }
            let payload = state.batch.payload
            guard let envelopes = try? Batch.envelopes(in: payload) else { return 0 }
            var rebuilt = BatchBuilder(reservingCapacity: payload.count)
            var replaced = 0
            for envelope in envelopes {
                let address = String(decoding: payload[envelope.address], as: UTF8.self)
                if envelope.kind == .state || envelope.kind == .accepted, addresses.contains(address) {
                    rebuilt.append(kind: .error, flags: [], correlation: envelope.correlation, address: payload[envelope.address],
                                   payload: error(address).payload)
                    replaced += 1
                } else {
                    rebuilt.append(envelope, from: payload, correlation: envelope.correlation)
                }
            }
            if replaced > 0 { state.batch = rebuilt }
            return replaced
        }
    }

    func end(socket: SocketID, via loop: WorkerLoop) {
        state.withLock { state in
            state.collecting = false
            guard !state.batch.isEmpty else { return }
            loop.post(Outbound(socket: socket, frames: state.batch.frames()))
            state.batch = BatchBuilder()
        }
    }
}
