import GroveCluster
@_spi(GroveInternal) import GroveWire
import ZeroMQ

/// How the driver moves what the core decided: every request and every worker message, lone or
/// batched, is put to ``CoordinatorCore/decide(client:_:)`` or ``CoordinatorCore/decide(worker:_:)``
/// as a ``MessageView``; the driver then copies bytes where the decision says. No rule lives here.
extension CoordinatorDriver {
    /// A client's batch: refused as a whole when it does not parse, else each envelope in order.
    /// - Parameter backlog: What waits for the client (``backlog(of:building:io:)``).
    /// - Parameter sender: The client's key, numbered (``Containment/number(ofSender:)``); 0 without CURVE.
    /// - Parameter addressCount: The size of the batch's address frame (it must be empty).
    func forward(_ batch: [UInt8], count: UInt64, addressCount: Int, fromClient identity: [UInt8], as principal: Gatekeeper.Principal?,
                 backlog: ClientBacklog, sender: UInt32 = 0, io: LoopIO) {
        let envelopes: [Envelope]
        switch core.envelopes(ofBatch: batch, count: count, addressCount: addressCount, from: identity) {
        case .success(let parsed): envelopes = parsed
        case .failure(let refusal):
            apply(refusal.actions, io: io)
            return
        }
        batch.withUnsafeBytes { batch in
            for envelope in envelopes {
                forward(MessageView(envelope, in: batch), fromClient: identity, as: principal, backlog: backlog, sender: sender, io: io)
            }
        }
    }

    /// One client request, lone or out of a batch.
    func forward(_ request: MessageView, fromClient identity: [UInt8], as principal: Gatekeeper.Principal?,
                 backlog: ClientBacklog, sender: UInt32 = 0, io: LoopIO) {
        switch core.decide(client: identity, request, as: principal, backlog: backlog, sender: sender) {
        case .forward(let worker, let id):
            // A keyed event's key is kept under the client's key, which the worker cannot see.
            let bound = request.kind == .event && request.header.flags.contains(.keyed)
                ? core.containment.key(of: sender).map { Array($0.utf8) } : nil
            if let tracing, let trace = request.traceBytes {
                forward(request, traced: trace, to: worker, id: id, sender: bound, tracing: tracing, io: io)
            } else {
                toWorker(worker, io: io) { request.append(to: &$0, correlation: id, sender: bound) }
            }
        case .act(let actions):
            apply(actions, io: io)
        }
    }

    /// A worker's batch: refused as a whole when its connection is no registered worker
    /// process's (``CoordinatorCore/sender(_:userID:kind:now:)``), its header counts more
    /// envelopes than `limits.batchEnvelopes` (before any is read, as a client's), or it does not
    /// parse; else each envelope in order.
    /// - Parameter count: The envelopes its header counts (its correlation).
    /// - Parameter userID: The message's ZAP user id (`nil` without CURVE).
    /// - Parameter addressCount: The size of the batch's address frame (it must be empty).
    func forward(_ batch: [UInt8], count: UInt64, addressCount: Int, fromWorker identity: [UInt8], userID: String?, io: LoopIO) {
        let worker: Int
        switch core.sender(identity, userID: userID, kind: .batch, now: io.now) {
        case .worker(let number): worker = number
        case .refused(let refusal):
            apply(refusal, io: io)
            return
        }
        let envelopes: [Envelope]
        do throws(WireError) {
            if let refusal = Batch.addressRefusal(addressCount) { throw refusal }
            if let refusal = core.workerBatchRefusal(count: count, from: worker) { throw refusal }
            envelopes = try Batch.envelopes(in: batch, count: count)
        } catch {
            // Ours never send such a batch: a peer with a worker's key is misbehaving. Logged
            // once per message, never with the payload.
            log.warning("refused a batch from worker \(core.workerNames[worker]): \(error.message)")
            apply([.toWorker(core.workerNames[worker], WireMessage.error(error, correlation: 0))], io: io)
            return
        }
        // Replies come in runs to one client: its batch is taken out of `toClients` once per
        // run, not looked up by the client's identity for every reply.
        var run = ClientRun()
        defer { run.end(into: self) }
        batch.withUnsafeBytes { raw in
            for envelope in envelopes {
                let view = MessageView(envelope, in: raw)
                switch core.decide(worker: worker, view) {
                case .reply(let client, let correlation):
                    let size = client.count + Header.size + view.addressBytes.count + view.payloadCount
                    if let replacement = replacing(replyOf: size, kind: view.kind, correlation: correlation,
                                                   address: view.addressBytes, to: client,
                                                   building: run.isFor(client) ? run.byteCount : 0, io: io) {
                        run.end(into: self)
                        apply([.toClient(client, replacement)], io: io)
                        continue
                    }
                    if !run.isFor(client) { run.start(for: client, in: self) }
                    if run.batching {
                        run.append(envelope, from: batch, correlation: correlation, driver: self, io: io)
                    } else {
                        send(envelope, from: batch, correlation: correlation, to: client, on: clients, io: io)
                    }
                case .act(let actions):
                    guard !actions.isEmpty else { continue }
                    // Anything that may write to a client ends the run first, so replies keep their order.
                    run.end(into: self)
                    apply(actions, io: io)
                }
            }
        }
    }

    /// A message a registered worker sent on its own (a turn of the worker's that answered one
    /// request, a state change, an io call).
    /// - Parameter userID: The message's ZAP user id (`nil` without CURVE).
    func forward(_ message: MessageView, fromWorker identity: [UInt8], userID: String?, io: LoopIO) {
        let worker: Int
        switch core.sender(identity, userID: userID, kind: message.kind, now: io.now) {
        case .worker(let number): worker = number
        case .refused(let refusal):
            apply(refusal, io: io)
            return
        }
        switch core.decide(worker: worker, message) {
        case .reply(let client, let correlation):
            let size = client.count + Header.size + message.addressBytes.count + message.payloadCount
            if let replacement = replacing(replyOf: size, kind: message.kind, correlation: correlation,
                                           address: message.addressBytes, to: client,
                                           building: toClients[client]?.byteCount ?? 0, io: io) {
                apply([.toClient(client, replacement)], io: io)
                return
            }
            if core.batchingClients.contains(client) {
                toClient(client, io: io) { message.append(to: &$0, correlation: correlation) }
            } else {
                // The view's header has no traced flag: its payload is the payload proper.
                Header(message.kind, flags: message.header.flags, correlation: correlation).withUnsafeBytes { header in
                    io.send(clients, peer: client, header, message.addressBytes, message.payloadBytes)
                }
            }
        case .act(let actions):
            apply(actions, io: io)
        }
    }

    /// A worker's batch of one request goes as a plain message straight from the batch's bytes;
    /// more go as one batch message. To the connection of the worker's registered process;
    /// nowhere when none is registered.
    func send(_ batch: BatchBuilder, toWorker worker: Int, io: LoopIO) {
        guard let identity = core.routingIDs[worker] else { return }
        if batch.withLoneMessage({ io.send(workers, peer: identity, $0, $1, $2) }) == nil {
            io.send(workers, [identity] + batch.frames())
        }
    }

    /// One envelope of a worker's batch on its own, under the client's correlation id, to a
    /// client that does not batch: header, address and payload go to the socket straight from
    /// the stack and the batch, with no arrays made for them.
    func send(_ envelope: Envelope, from batch: [UInt8], correlation: UInt64, to peer: [UInt8], on socket: SocketID, io: LoopIO) {
        precondition(envelope.address.lowerBound >= 0 && envelope.address.upperBound <= batch.count
                     && envelope.payload.lowerBound >= 0 && envelope.payload.upperBound <= batch.count,
                     "the envelope's ranges are outside the batch it is read from")
        let header = Header(envelope.kind, flags: envelope.flags, correlation: correlation)
        header.withUnsafeBytes { header in
            batch.withUnsafeBytes { source in
                io.send(socket, peer: peer, header, UnsafeRawBufferPointer(rebasing: source[envelope.address]),
                        UnsafeRawBufferPointer(rebasing: source[envelope.payload]))
            }
        }
    }
}

/// The replies of one run to one client, collected outside ``CoordinatorDriver/toClients``
/// while the run lasts. Anything else that may write to the client's batch ends the run first,
/// so replies keep their order.
struct ClientRun {
    private(set) var client: [UInt8]?
    private(set) var batching = false
    private var batch = BatchBuilder()

    /// The bytes of the run's batch so far.
    var byteCount: Int { batch.byteCount }

    func isFor(_ other: [UInt8]) -> Bool { client == other }

    mutating func start(for client: [UInt8], in driver: CoordinatorDriver) {
        end(into: driver)
        self.client = client
        batching = driver.core.batchingClients.contains(client)
        if batching { batch = driver.toClients.removeValue(forKey: client) ?? BatchBuilder() }
    }

    mutating func append(_ envelope: Envelope, from source: [UInt8], correlation: UInt64, driver: CoordinatorDriver, io: LoopIO) {
        batch.append(envelope, from: source, correlation: correlation)
        if batch.byteCount >= BatchBuilder.preferredByteCount, let client {
            io.send(driver.clients, [client] + batch.frames())
            batch = BatchBuilder()
        }
    }

    /// Puts the run's batch back where ``CoordinatorDriver/flush(io:)`` sends it.
    mutating func end(into driver: CoordinatorDriver) {
        guard let client else { return }
        if batching, !batch.isEmpty { driver.toClients[client] = batch }
        self.client = nil
        batching = false
        batch = BatchBuilder()
    }
}
