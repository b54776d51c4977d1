import DequeModule
import GroveWire
import ZeroMQ

extension WorkerRuntime {
    /// One batch from the I/O loop, on its thread: every event handed to its host in arrival
    /// order (handled at once when the host is idle, else queued), then each host it woke
    /// drained once (hosts share this executor: plain calls), then every reply sent in one
    /// message.
    func handle(_ batch: [Inbound]) {
        turn { queue(batch) }
    }

    /// One host woken outside a batch, in a turn of its own: drained, then the turn ends as a
    /// batch's does (its durable state written before its replies leave).
    func drainAlone(_ target: DrainTarget) {
        link.turn.begin(collectingWoken: false)
        target.drainHere()
        endTurn()
    }

    /// Runs `body`, which decides received messages, as one turn (``Turn``). Parked messages
    /// left then are decided in a later turn, after the loop has run (heartbeats, reads).
    private func turn(_ body: () -> Void) {
        link.turn.begin(collectingWoken: true)
        recovery.beginTurn(now: .now)
        body()
        endTurn()
        // Messages are parked only by a turn that ran out of time.
        if !parked.isEmpty { recovery.turnsCut += 1 }
        if !parked.isEmpty, !parked.resuming {
            parked.resuming = true
            // A heartbeat due goes first (the tick task may wait behind the instances' tasks).
            run(core.tick(now: .now))
            Task {
                try? await Task.sleep(for: .milliseconds(1))
                self.resumeParked()
            }
        }
    }

    /// Ends a turn, the one place that does, in the order that keeps the worker's promises:
    /// the hosts woken in it drain; the instances that ended are settled, so one its machine
    /// removes has freed its key by the time its last reply arrives; the durable instances are
    /// committed and the audit lines written (``commitTurn()``), so what is acknowledged is in
    /// the store and the log; then the replies leave.
    func endTurn() {
        link.turn.woken.drainCollected()
        settleEndings()
        commitTurn()
        link.flush()
    }

    /// Whether this turn has spent its time bringing instances back on demand
    /// (``Recovery/turnIsOver(now:)``): the clock is read only once it brought one.
    private var turnIsOver: Bool { recovery.isTimed && recovery.turnIsOver(now: .now) }

    /// Decides parked messages in a turn of their own.
    private func resumeParked() {
        parked.resuming = false
        guard !parked.isEmpty else { return }
        turn { queueParked(now: .now) }
    }

    /// Queues a batch from the I/O thread in order; ``handle(_:)`` then drains the hosts it woke
    /// (``DrainQueue/drainCollected()``) and flushes the link. Lone messages and the envelopes
    /// of batches take the same road: ``decide(_:address:payload:now:)``. Behind parked
    /// messages, the batch waits its turn.
    func queue(_ batch: [Inbound]) {
        let now = ContinuousClock.now
        if let sessionOver = core.heard(at: now) {
            run(sessionOver)
            return
        }
        guard parked.isEmpty else {
            parked.messages.append(contentsOf: batch)
            queueParked(now: now)
            return
        }
        for index in batch.indices {
            queue(batch[index], now: now)
            if turnIsOver {
                parked.messages.append(contentsOf: batch[batch.index(after: index)...])
                return
            }
        }
    }

    /// Parked messages, oldest first, until a turn's restores run out of time.
    private func queueParked(now: ContinuousClock.Instant) {
        while !turnIsOver {
            if let rest = parked.batch {
                parked.batch = nil
                queue(envelopes: rest.envelopes, from: rest.next, of: rest.payload, now: now)
            } else if let inbound = parked.messages.popFirst() {
                queue(inbound, now: now)
            } else {
                return
            }
        }
    }

    /// One message: lone, or a batch whose envelopes are each decided as a lone message would
    /// be, straight from the batch's bytes.
    private func queue(_ inbound: Inbound, now: ContinuousClock.Instant) {
        let frames = inbound.frames
        do {
            guard frames.count == 3 else {
                throw WireError(.malformedFrame, "a message of \(frames.count) frames; the coordinator sends three")
            }
            let header = try Header(frames[0])
            if header.kind == .batch {
                let envelopes: [Envelope]
                do {
                    envelopes = try Batch.envelopes(in: frames[2])
                } catch {
                    log.warning("dropped a malformed batch from the coordinator", metadata: ["error": "\(error)"])
                    return
                }
                queue(envelopes: envelopes, from: 0, of: frames[2], now: now)
                return
            }
            decide(header, address: try WireMessage.address(frames[1], correlation: header.correlation), payload: frames[2][...], now: now)
        } catch {
            log.warning("dropped a malformed message from the coordinator", metadata: ["error": "\(error)"])
        }
    }

    /// The envelopes of a batch from `first` on; those left when a turn's restores run out of
    /// time are parked, ahead of every other parked message.
    private func queue(envelopes: [Envelope], from first: Int, of payload: [UInt8], now: ContinuousClock.Instant) {
        var index = first
        while index < envelopes.count {
            let envelope = envelopes[index]
            index += 1
            do {
                decide(Header(envelope.kind, flags: envelope.flags, correlation: envelope.correlation),
                       address: try envelope.addressText(in: payload), payload: payload[envelope.payload], now: now)
            } catch {
                log.warning("dropped a malformed envelope from the coordinator", metadata: ["error": "\(error)"])
            }
            if turnIsOver, index < envelopes.count {
                parked.batch = (payload, envelopes, index)
                return
            }
        }
    }
}

/// Messages from the coordinator received and not yet decided, in arrival order.
struct ParkedInbound {
    /// The rest of the batch message a turn stopped in: its envelopes from `next` on. Decided
    /// before `messages`, which arrived after it.
    var batch: (payload: [UInt8], envelopes: [Envelope], next: Int)?
    var messages: Deque<Inbound> = []
    /// Whether a turn to decide them is scheduled.
    var resuming = false

    var isEmpty: Bool { batch == nil && messages.isEmpty }
}
