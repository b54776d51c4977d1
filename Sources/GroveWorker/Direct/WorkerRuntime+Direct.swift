import GroveCluster
@_spi(GroveInternal) import GroveWire

/// One request a client sent to the worker's direct endpoint, as the I/O thread read it.
struct DirectInbound: Sendable {
    /// The client's routing id on the direct socket.
    let peer: [UInt8]
    /// The connection's ZAP `User-Id` (``Gatekeeper/trustedUser``, or a key and an address).
    let userID: String
    /// What waits for the client on the direct socket, read once per received batch.
    let backlog: ClientBacklog
    /// The message's frames after the routing id (at most the socket's maximum).
    let frames: ArraySlice<[UInt8]>
    /// How many frames the message had after the routing id, those past the maximum included.
    var frameCount: Int

    /// What ZeroMQ takes for one client on the direct socket before our outbox holds the rest
    /// (the socket's send high-water mark, ``Worker/bindDirect``).
    static let socketQueue = 1000

    /// What waits for the client once the replies to the first `made` requests of this message
    /// are sent too (`madeBytes`: the least they take, header and address): a turn sends nothing
    /// until it ends, so past what ZeroMQ takes they wait in the outbox, and a batch of many
    /// thousand envelopes meets the client's bound (``ClientRules``) within its own message. Past
    /// it, its requests are owed busies, kept as runs, rather than one refusal encoded per
    /// envelope: on 076e5e6 one batch of 30,000 `get`s held the worker's loop past the
    /// heartbeat timeout, and the coordinator had it killed. Free (the backlog as read) for a
    /// batch of up to ``socketQueue`` envelopes.
    func backlog(afterReplies made: Int, madeBytes: Int) -> ClientBacklog {
        guard made > Self.socketQueue else { return backlog }
        return ClientBacklog(messages: backlog.messages + made - Self.socketQueue, bytes: backlog.bytes + madeBytes)
    }
}

// What the worker does with its direct requests (docs/DIRECT-ROUTES.md, step 3): each is decided
// by ``DirectCore`` (through ``DirectRoute``); one it lets through is handed on exactly as a
// forwarded one is (``WorkerRuntime/decide(_:address:payload:now:)``), under a direct id, in a
// turn of its own, so its reply leaves after the turn's commit and goes back to its client.

extension WorkerRuntime {
    /// A batch of direct requests from the I/O loop, on its thread, as one turn.
    func handleDirect(_ batch: [DirectInbound]) {
        guard let direct = link.direct else { return }
        let now = ContinuousClock.now
        // Stalled past the timeout: the session is over first, so every request is `moved`.
        if let over = core.stalled(at: now) { run(over) }
        runTurn {
            for inbound in batch { queueDirect(inbound, on: direct, now: now) }
        }
    }

    /// One direct message: lone, or a batch whose envelopes are each decided as a lone one.
    private func queueDirect(_ inbound: DirectInbound, on direct: DirectRoute, now: ContinuousClock.Instant) {
        let frames = inbound.frames
        guard frames.count == 3, inbound.frameCount == 3 else {
            return direct.refuse(inbound.peer, WireError(.malformedFrame, "a message of \(inbound.frameCount) frames; a request has three "
                                                         + "(header, address, payload: docs/PROTOCOL.md)"), correlation: 0)
        }
        let header: Header
        do {
            header = try Header(frames[frames.startIndex])
        } catch {
            return direct.refuse(inbound.peer, error, correlation: 0)
        }
        let payload = frames[frames.startIndex + 2]
        guard header.kind == .batch else {
            do {
                let address = try WireMessage.address(frames[frames.startIndex + 1], correlation: header.correlation)
                decideDirect(header, address: address, payload: payload[...], from: inbound, backlog: inbound.backlog, on: direct,
                             now: now)
            } catch {
                direct.refuse(inbound.peer, error, correlation: header.correlation)
            }
            return
        }
        // Bounded from the header before any envelope is read (limits.batchEnvelopes), and its
        // address frame empty, as the coordinator's clients endpoint holds it.
        if let refusal = direct.batchRefusal(count: header.correlation) { return direct.refuse(inbound.peer, refusal, correlation: 0) }
        if let refusal = Batch.addressRefusal(frames[frames.startIndex + 1].count) {
            return direct.refuse(inbound.peer, refusal, correlation: 0)
        }
        let envelopes: [Envelope]
        do {
            envelopes = try Batch.envelopes(in: payload, count: header.correlation)
        } catch {
            return direct.refuse(inbound.peer, error, correlation: 0)
        }
        // A client that batches gets its replies batched (docs/PROTOCOL.md, "Batches").
        direct.noteBatch(from: inbound.peer)
        // Each envelope is answered: what the earlier ones will send counts toward the client's queue.
        var made = 0
        var madeBytes = 0
        for envelope in envelopes {
            let lone = Header(envelope.kind, flags: envelope.flags, correlation: envelope.correlation)
            do {
                decideDirect(lone, address: try envelope.addressText(in: payload), payload: payload[envelope.payload], from: inbound,
                             backlog: inbound.backlog(afterReplies: made, madeBytes: madeBytes), on: direct, now: now)
            } catch {
                direct.refuse(inbound.peer, error, correlation: envelope.correlation)
            }
            made += 1
            madeBytes += Header.size + envelope.address.count
        }
    }

    /// One direct request: refused, or handed on under its direct id as a forwarded one is.
    /// - Parameter backlog: What waits for the client, with what this message's earlier requests will send.
    private func decideDirect(_ header: Header, address: String, payload: ArraySlice<UInt8>, from inbound: DirectInbound,
                              backlog: ClientBacklog, on direct: DirectRoute, now: ContinuousClock.Instant) {
        // A trace context the core would drop with a log line is refused here, so every request
        // is answered.
        if header.flags.contains(.traced) {
            do {
                _ = try TraceParent.split(payload, correlation: header.correlation)
            } catch {
                return direct.refuse(inbound.peer, error, correlation: header.correlation)
            }
        }
        switch direct.decide(peer: inbound.peer, header, address: address, payloadCount: payload.count, userID: inbound.userID,
                             backlog: backlog) {
        case .act(let actions):
            direct.carryOut(actions)
        case .deliver(let id, let existingOnly):
            // An event without a key or a trace for an instance that is here, the common case:
            // handed to it as ``decide(_:address:payload:now:)`` would (the core delivers every
            // event), with one lookup of the instance instead of two.
            if header.kind == .event, header.flags.isDisjoint(with: [.keyed, .traced]), let here = instances[address] {
                here.touch(core.passivation.sweep)
                return deliver(payload, flags: header.flags, correlation: id, address: address, to: here)
            }
            if existingOnly, let refusal = notSpawned(address) {
                return link.send(WireMessage.error(refusal, correlation: id, address: address))
            }
            let sent: ArraySlice<UInt8>
            do {
                sent = try Self.boundToSender(payload, header, userID: inbound.userID)
            } catch {
                return link.send(WireMessage.error(error, correlation: id, address: address))
            }
            decide(Header(header.kind, flags: header.flags, correlation: id), address: address, payload: sent, now: now)
        }
    }

    /// `moved` `not-spawned` for a keyed instance this worker neither holds nor can bring back
    /// (from recovery, passivation or the shared store): a direct request never starts one
    /// (docs/DIRECT-ROUTES.md, 2.6). `nil` when it is here now, or when it is refused for
    /// another reason, which the request's own road then answers.
    private func notSpawned(_ address: String) -> WireError? {
        guard instances[address] == nil, !inStateTable(address) else { return nil }
        do {
            _ = try instance(for: address, spawning: false)
            return nil
        } catch {
            guard error == WorkerCore.notSpawned(address) else { return nil }
            return DirectCore.moved(.notSpawned, address: address, worker: link.worker)
        }
    }
}
