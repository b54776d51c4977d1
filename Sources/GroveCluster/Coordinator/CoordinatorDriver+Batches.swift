import GroveWire
import ZeroMQ

/// The hot path: batches of requests from clients and of replies from workers are forwarded
/// envelope by envelope as bytes, with the core deciding only where each goes (and under which
/// correlation id). Everything else in a batch takes the core's general path, in order.
extension CoordinatorDriver {
    func forward(_ batch: [UInt8], count: UInt64, fromClient identity: [UInt8], io: LoopIO) {
        let envelopes: [Envelope]
        do {
            envelopes = try Batch.envelopes(in: batch, count: count)
        } catch {
            // Refused as a whole: correlation 0, not one envelope's, which would look like an answer to it.
            apply([.toClient(identity, CoordinatorCore.errorMessage(error, correlation: 0))], io: io)
            return
        }
        core.batchingClients.insert(identity)
        for envelope in envelopes {
            guard Self.routesDirectly(envelope, maxPayload: core.maxPayload) else {
                do {
                    apply(core.fromClient(identity, try envelope.message(in: batch)), io: io)
                } catch {
                    apply([.toClient(identity, CoordinatorCore.errorMessage(error, correlation: envelope.correlation))], io: io)
                }
                continue
            }
            let routed: Result<(worker: Int, id: UInt64), WireError>
            do {
                let address = try envelope.addressText(in: batch)
                routed = core.route(from: identity, correlation: envelope.correlation, address: address,
                                    spawns: envelope.kind == .event)
            } catch {
                routed = .failure(error)
            }
            switch routed {
            case .success(let (worker, id)):
                toWorker(worker, io: io) { $0.append(envelope, from: batch, correlation: id) }
            case .failure(let error):
                apply([.toClient(identity, CoordinatorCore.errorMessage(error, correlation: envelope.correlation))], io: io)
            }
        }
    }

    /// Requests routed to a machine's worker as bytes; the rest (list, unknown kinds for
    /// clients, oversized payloads) take the core's general path, which answers them.
    static func routesDirectly(_ envelope: Envelope, maxPayload: Int) -> Bool {
        routesDirectly(envelope.kind, payloadCount: envelope.payload.count, maxPayload: maxPayload)
    }

    static func routesDirectly(_ kind: MessageKind, payloadCount: Int, maxPayload: Int) -> Bool {
        switch kind {
        case .event, .get, .cancel, .stop, .echo: payloadCount <= maxPayload
        default: false
        }
    }

    /// A request sent on its own (header, address, payload) routed as bytes, like a batch's
    /// envelope: no message is made of it. False, having done nothing, when it needs the core's
    /// general path (another kind, an oversized payload, an address that is not UTF-8).
    func forward(_ header: Header, _ frames: ArraySlice<[UInt8]>, fromClient identity: [UInt8], io: LoopIO) -> Bool {
        let address = frames[frames.startIndex + 1], payload = frames[frames.startIndex + 2]
        guard Self.routesDirectly(header.kind, payloadCount: payload.count, maxPayload: core.maxPayload),
              let text = try? WireMessage.address(address, correlation: header.correlation) else { return false }
        switch core.route(from: identity, correlation: header.correlation, address: text, spawns: header.kind == .event) {
        case .success(let (worker, id)):
            toWorker(worker, io: io) { $0.append(kind: header.kind, flags: header.flags, correlation: id, address: address, payload: payload) }
        case .failure(let error):
            apply([.toClient(identity, CoordinatorCore.errorMessage(error, correlation: header.correlation))], io: io)
        }
        return true
    }

    func forward(_ batch: [UInt8], fromWorker identity: [UInt8], io: LoopIO) {
        let name = String(decoding: identity, as: UTF8.self)
        if let refusal = core.heard(from: name, now: io.now) {
            apply(refusal, io: io)
            return
        }
        let envelopes: [Envelope]
        do {
            envelopes = try Batch.envelopes(in: batch)
        } catch {
            apply([.toWorker(name, CoordinatorCore.errorMessage(error, correlation: 0))], io: io)
            return
        }
        let worker = core.number(of: name)  // heard(from:) found it registered
        // Replies come in runs to one client: its batch is taken out of `toClients` once per
        // run, not looked up by the client's identity for every reply.
        var run = ClientRun()
        defer { run.end(into: self) }
        for envelope in envelopes {
            switch envelope.kind {
            case .state, .accepted, .error:
                guard let request = core.answered(by: worker, correlation: envelope.correlation) else { continue }
                if case .client(let client, let correlation) = request.origin {
                    if !run.isFor(client) { run.start(for: client, in: self) }
                    if run.batching {
                        run.append(envelope, from: batch, correlation: correlation, driver: self, io: io)
                    } else {
                        send(envelope, from: batch, correlation: correlation, to: client, on: clients, io: io)
                    }
                } else if let reply = try? envelope.message(in: batch) {
                    run.end(into: self)
                    apply(core.deliver(reply, to: request), io: io)
                }
            default:
                run.end(into: self)
                do {
                    apply(core.fromWorker(name, try envelope.message(in: batch)), io: io)
                } catch {
                    apply([.toWorker(name, CoordinatorCore.errorMessage(error, correlation: envelope.correlation))], io: io)
                }
            }
        }
    }
}

extension CoordinatorDriver {
    /// A worker's reply sent on its own (a turn of the worker's that answered one request),
    /// answered as a batch's replies are, with no message made of it. False, having done
    /// nothing, for other kinds, which take the core's general path.
    func forwardReply(_ header: Header, _ frames: ArraySlice<[UInt8]>, fromWorker identity: [UInt8], io: LoopIO) -> Bool {
        switch header.kind {
        case .state, .accepted, .error: break
        default: return false
        }
        let name = String(decoding: identity, as: UTF8.self)
        if let refusal = core.heard(from: name, now: io.now) {
            apply(refusal, io: io)
            return true
        }
        guard let request = core.answered(by: core.number(of: name), correlation: header.correlation) else { return true }
        let address = frames[frames.startIndex + 1], payload = frames[frames.startIndex + 2]
        guard case .client(let client, let correlation) = request.origin else {
            if let reply = try? WireMessage(frames: frames) { apply(core.deliver(reply, to: request), io: io) }
            return true
        }
        if core.batchingClients.contains(client) {
            toClient(client, io: io) {
                $0.append(kind: header.kind, flags: header.flags, correlation: correlation, address: address, payload: payload)
            }
        } else {
            Header(header.kind, flags: header.flags, correlation: correlation).withUnsafeBytes { header in
                address.withUnsafeBytes { address in
                    payload.withUnsafeBytes { payload in io.send(clients, peer: client, header, address, payload) }
                }
            }
        }
        return true
    }

    /// A worker's batch of one request goes as a plain message straight from the batch's bytes;
    /// more go as one batch message.
    func send(_ batch: BatchBuilder, toWorker worker: Int, io: LoopIO) {
        let identity = workerIdentities[worker]
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
