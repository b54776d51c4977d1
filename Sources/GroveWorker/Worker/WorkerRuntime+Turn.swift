import DequeModule
import Foundation
import GroveCluster
@_spi(GroveInternal) import GroveWire
import ZeroMQ

// One turn of the worker's loop, in this file from end to end: a batch from the coordinator
// (``WorkerRuntime/handle(_:)``) is queued message by message, each decided by ``WorkerCore``
// (``WorkerRuntime/decide(_:address:payload:now:)``) and carried out (an event: delivered to its
// host, ``WorkerRuntime/deliver(_:flags:correlation:address:)``); then the turn ends
// (``WorkerRuntime/endTurn()``): the woken hosts drain, endings are settled, the durable
// instances are committed and the audit lines written, and the replies leave as one message.

extension WorkerRuntime {
    /// One batch from the I/O loop, on its thread: every event handed to its host in arrival
    /// order (handled at once when the host is idle, else queued), then each host it woke
    /// drained once (hosts share this executor: plain calls), then every reply sent in one
    /// message.
    func handle(_ batch: [Inbound]) {
        runTurn { queue(batch) }
    }

    /// One host woken outside a batch, in a turn of its own: drained, then the turn ends as a
    /// batch's does (its durable state written before its replies leave).
    func drainAlone(_ target: DrainTarget) {
        turn.begin(collectingWoken: false)
        if target.drainHere() { drained(target) }
        endTurn()
    }

    /// `target` drained its host: the instance it belongs to is told (a durable one joins the
    /// turn's writes).
    func drained(_ target: DrainTarget) {
        instances[target.address]?.drained(target)
    }

    /// Runs `body`, which decides received messages, as one turn (``Turn``). Parked messages
    /// left then are decided in a later turn, after the loop has run (heartbeats, reads).
    func runTurn(_ body: () -> Void) {
        turn.begin(collectingWoken: true)
        recovery.beginTurn(now: .now)
        body()
        endTurn()
        resumeParkedLater()
    }

    /// Ends a turn, the one place that does, in the order that keeps the worker's promises:
    /// the hosts woken in it drain; the instances that ended are settled, so one its machine
    /// removes has freed its key by the time its last reply arrives; the durable instances are
    /// committed and the audit lines written (``commitTurn()``), so what is acknowledged is in
    /// the store and the log; then the replies leave.
    func endTurn() {
        turn.woken.drainCollected { drained($0) }
        settleEndings()
        commitTurn()
        releaseAfterCommit()
        link.flush()
    }

    /// Ends a turn of the worker's loop: the durable instances that changed are committed, then
    /// the audit lines of the turn's transitions are written, so a durable machine's line never
    /// outlives a commit that failed (the worker exits first). The caller then lets the
    /// replies go.
    func commitTurn() {
        writeDurable()
        writeAudit()
    }

    /// Writes every durable instance that changed (the records of `state` instances, the
    /// events or the record of `journal` ones, see ``JournalCursor``), and forgets those that
    /// ended, in one commit. A store that fails is the core's to rule on
    /// (``WorkerFailure/storeWrite(_:)``: the worker ends before anything it acknowledged is
    /// lost, and its supervisor restarts it from what the store holds).
    func writeDurable() {
        let (changed, ended) = turn.durable.take()
        guard let store, !changed.isEmpty || !ended.isEmpty else { return }
        let snapshotEvery = core.snapshotEvery
        // An instance that ended meanwhile writes nothing: its address is in `ended`.
        let writes = changed.compactMap { $0.write(snapshotEvery: snapshotEvery) }
        let (commit, failures) = StoreCommit.gathering(writes, ended: ended, flush: core.commitFlush,
                                                       time: { wallMs })
        for failure in failures { log.error("\(failure)") }
        commitRefusingMoved(commit, to: store)
        // Old journal entries that hold the store's space back go once their machines write a
        // record, at a later commit.
        for address in store.journalLaggards(limit: Self.laggardsPerCommit) {
            instances[address]?.writeRecordNext()
        }
    }

    /// Commits `commit`. A shared store that refuses some of its machines as another worker's
    /// (handoff) gets it again without them, until it lands or refuses nothing it names; those
    /// machines leave this worker (``WorkerCore/movedAway(_:why:)``). Any other failure is the
    /// core's to rule on (``WorkerFailure/storeWrite(_:)``).
    private func commitRefusingMoved(_ commit: StoreCommit, to store: any MachineStore) {
        var commit = commit
        var moved: Set<String> = []
        var why = ""
        while true {
            do {
                let started = link.metrics.isOn ? WorkerMetrics.nanoseconds() : 0
                if !commit.isEmpty { try store.commit(commit) }
                if started != 0 {
                    link.metrics.storeCommit(seconds: Double(WorkerMetrics.nanoseconds() &- started) / 1e9, writes: commit.writeCount)
                }
                if !commit.answers.isEmpty { DeathAfterCommit.process.committed() }
                break
            } catch {
                // Each round leaves out at least one more address: it ends.
                guard let refused = commit.refusedAddresses(in: error) else { return failed(.storeWrite(error.message)) }
                moved.formUnion(refused)
                why = "the shared store refused this worker's write: " + error.message
                commit = commit.excluding(refused)
            }
        }
        if !moved.isEmpty { run(core.movedAway(moved, why: why)) }
    }

    /// Drops the instances another worker owns now (``WorkerAction/dropMoved(_:)``): out of
    /// memory without a write (their timers with them), their replies held in this turn
    /// answered `unavailable`.
    func dropMoved(_ addresses: [String]) {
        for address in addresses {
            recovery.waiting[address] = nil
            guard let instance = instances[address] else { continue }
            instance.passivate()
            instances[address] = nil
        }
        link.outbound.withdraw(repliesTo: Set(addresses)) { address in
            WireError(.unavailable, "instance \(address) moved to another worker of its pool (handoff); what it ran here was not "
                      + "committed: retry", address: address)
        }
        link.direct?.withdraw(repliesTo: Set(addresses), worker: link.worker)
        scheduleWake()
    }

    /// Drops the in-memory keyed instances of handoff machines that the shared store says
    /// another worker owns now (``WorkerAction/checkOwnership``). A store that cannot answer
    /// leaves them: their next write is refused and drops them then.
    func checkOwnership() {
        guard let store else { return }
        let handoff = Set(core.placed.values.filter { $0.handoff == true && $0.keyed }.map(\.name))
        let held = instances.keys.filter { MachineAddress.hasKey($0) && handoff.contains(MachineAddress.machine(of: $0)) }
        guard !held.isEmpty else { return }
        do {
            let moved = try store.movedAway(among: held)
            run(core.movedAway(moved, why: "another worker adopted it while this one was lost to the coordinator"))
        } catch {
            log.warning("""
                could not ask the shared store which instances moved while this worker was lost: \(error.message); \
                each is dropped when its next write is refused
                """)
        }
    }

    /// At most this many machines are asked for a record per commit to free journal space.
    static let laggardsPerCommit = 256

    /// Writes the audit lines committed since the last write. A log that does not take them is
    /// the core's to rule on (``WorkerFailure/auditWrite(_:)``: the worker ends before the
    /// replies of those transitions leave, and its supervisor restarts it).
    func writeAudit() {
        do {
            try turn.audit.writePending()
        } catch {
            failed(.auditWrite(error.message))
        }
    }

    /// Whether this turn has spent its time bringing instances back on demand
    /// (``Recovery/turnIsOver(now:)``): the clock is read only once it brought one.
    var turnIsOver: Bool { recovery.turnIsOver(now: .now) }

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

    /// One message: lone, or a batch whose envelopes are each decided as a lone message would
    /// be, straight from the batch's bytes.
    func queue(_ inbound: Inbound, now: ContinuousClock.Instant) {
        let frames = inbound.frames
        do {
            guard frames.count == 3 else {
                throw WireError(.malformedFrame, "a message of \(frames.count) frames; the coordinator sends three")
            }
            let header = try Header(frames[0])
            if header.kind == .batch {
                let envelopes: [Envelope]
                do throws(WireError) {
                    // Bounded from the header before any envelope is read, as the coordinator
                    // holds this worker's batches (the welcome's batchEnvelopes).
                    if let refusal = BatchBound.refusal(count: header.correlation, limit: core.batchEnvelopes,
                                                        answerer: "worker \(link.worker) (from the coordinator)") {
                        throw refusal
                    }
                    envelopes = try Batch.envelopes(in: frames[2], count: header.correlation)
                } catch {
                    log.warning("dropped a batch from the coordinator", metadata: ["error": "\(error.message)"])
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
    func queue(envelopes: [Envelope], from first: Int, of payload: [UInt8], now: ContinuousClock.Instant) {
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

    /// One message from the coordinator: ``WorkerCore/decide(_:payload:now:)`` says what it
    /// is for, and this only carries it out. A trace context in front of the payload
    /// (``TraceParent``) is split off first, so the core reads payloads as they always were.
    func decide(_ header: Header, address: String, payload: ArraySlice<UInt8>, now: ContinuousClock.Instant) {
        guard header.flags.contains(.traced) else { return decide(header, address: address, payload: payload, trace: nil, now: now) }
        var untraced = header
        untraced.flags.remove(.traced)
        do {
            let (trace, body) = try TraceParent.split(payload, correlation: header.correlation)
            decide(untraced, address: address, payload: body, trace: trace, now: now)
        } catch {
            log.warning("dropped a malformed message from the coordinator", metadata: ["error": "\(error)"])
        }
    }

    private func decide(_ header: Header, address: String, payload: ArraySlice<UInt8>, trace: ArraySlice<UInt8>?,
                        now: ContinuousClock.Instant) {
        switch core.decide(header, payload: payload, now: now) {
        case .deliver:
            if let trace, let tracing {
                deliver(payload, flags: header.flags, correlation: header.correlation, address: address, trace: trace, tracing: tracing)
            } else {
                deliver(payload, flags: header.flags, correlation: header.correlation, address: address)
            }
        case .accept:
            link.send(.accepted, correlation: header.correlation, address: address)
        case .request(let request):
            self.request(request, correlation: header.correlation, address: address, payload: payload)
        case .serve:
            serve(payload, binary: header.flags.contains(.binary), call: header.correlation, address: address,
                  parent: trace.flatMap { trace in tracing?.context(from: trace, kind: .ioRequest, address: address) })
        case .stopServing:
            // The task stays listed until it ends: its end is what `io-cancelled` reports.
            serving[header.correlation]?.cancel()
            log.notice("io request cancelled", metadata: ["machine": "\(address)", "call": "\(header.correlation)"])
        case .answerCancel(let fate):
            answerCancel(header.correlation, fate, address: address)
        case .complete(let result):
            run(.resume(call: header.correlation, result))
        case .observe(let observation):
            self.observation.update(observation)
            for (address, instance) in instances {
                instance.setWatched(observation.watches("state:" + address))
                instance.setEffectsWatched(observation.watches("effect:" + address))
            }
            hostWatchedTableEntries()
        case .quarantine(let quarantined):
            adoptPatterns(quarantined.patterns)
        case .release(let release):
            self.release(release, address: address)
        case .returned(let returned):
            self.returned(returned)
        case .access(let table):
            link.direct?.access(table)
        case .placement(let view):
            link.direct?.placement(view)
        case .act(let actions):
            run(actions)
        case .deadLetters(let request):
            deadLetters(request, correlation: header.correlation, address: address)
        case .refuse(let error):
            link.send(WireMessage.error(error, correlation: header.correlation, address: address))
        case .ignore:
            break
        }
    }

    /// An event for `address`: handed to its host (handled at once when idle, else queued),
    /// answered `accepted` at once with the no-wait flag, else with the state it committed once
    /// it ran.
    func deliver(_ payload: ArraySlice<UInt8>, flags: Header.Flags, correlation: UInt64, address: String) {
        if flags.contains(.keyed) {
            let reply = StateReply(link: link, correlation: correlation, address: address, binary: flags.contains(.binary))
            return deliverKeyed(payload, flags: flags, reply: reply)
        }
        do {
            if !stateTables.isEmpty, deliverIfInTable(payload, flags: flags, correlation: correlation, address: address) { return }
            deliver(payload, flags: flags, correlation: correlation, address: address, to: try instance(for: address))
        } catch {
            link.send(WireMessage.error(error, correlation: correlation, address: address))
        }
    }

    /// An event without an idempotency key for `target`, found already (``instance(for:spawning:)``
    /// or, on the direct road, the instance that is here). A no-wait event needs no
    /// ``StateReply``: it is answered here.
    func deliver(_ payload: ArraySlice<UInt8>, flags: Header.Flags, correlation: UInt64, address: String, to target: any HostedMachine) {
        if link.metrics.isOn { link.metrics.event(on: target.eventCounts) }
        let binary = flags.contains(.binary)
        if flags.contains(.noWait) {
            // Answered as soon as it is queued, or refused: either way at once, not in the
            // machine's turn.
            if let refused = target.enqueue(payload, binary: binary, correlation: correlation) {
                return link.send(WireMessage.error(refused, correlation: correlation, address: address))
            }
            return link.send(.accepted, correlation: correlation, address: address)
        }
        target.send(payload, binary: binary, reply: StateReply(link: link, correlation: correlation, address: address, binary: binary))
    }

    /// The instance at `address`, started when the core says it may be.
    /// - Parameter spawning: Whether a keyed instance may start (events only).
    func instance(for address: String, spawning: Bool = true) throws(WireError) -> any HostedMachine {
        let sweep = core.passivation.sweep
        if let existing = instances[address] {
            // What passivation counts idleness by: one store per message.
            existing.touch(sweep)
            return existing
        }
        // A resting instance moves to a host for what reaches it here (a plain event for it runs
        // in its table: ``deliverIfInTable(_:flags:correlation:address:)``).
        if let host = try hostFromTable(address) {
            host.touch(sweep)
            return host
        }
        // Empty tables are not searched: each search hashes the address first, and a fresh key
        // finds nothing in any of them.
        if !unreadable.isEmpty, let refusal = unreadable[address] { throw refusal }
        let name = MachineAddress.machine(of: address)
        let placed = core.placed[name]
        let spawns = spawning || recovery.waiting[address] != nil || core.passivation.passivates(name) || placed?.handoff == true
        // The static form, given the core's fields: a call on `core` works on a copy of it.
        let machine = try WorkerCore.placement(of: address, spawning: spawns, placed: core.welcomed ? placed : nil,
                                               machineTypes: core.machineTypes, worker: core.worker)
        if let restored = restoreIfWaiting(address) {
            recovery.restoredOnDemand(now: .now, turn: recoveryTurn)
            restored.touch(sweep)
            return restored
        }
        // A passivated instance comes back from the store before its message is handed over,
        // in this turn: messages behind it wait their turn as they always do.
        if let restored = restorePassivated(address, of: name, placed: placed) {
            restored.touch(sweep)
            return restored
        }
        // A keyed instance that may have lived on another worker of the pool comes from there,
        // for a read too (it was spawned there).
        if let adopted = adoptHandedOff(address, placed: placed) {
            adopted.touch(sweep)
            return adopted
        }
        // Its record was there and did not read: refused, not started afresh over it.
        if !unreadable.isEmpty, let refusal = unreadable[address] { throw refusal }
        guard spawning || !MachineAddress.hasKey(address) else { throw WorkerCore.notSpawned(address) }
        guard let factory = factories[machine.type], let welcome = core.lastWelcome else {
            throw WireError(.unknownMachine, "worker \(link.worker) cannot host '\(address)' yet", address: address)
        }
        // A keyed instance starts for the event in hand, which then finds it idle.
        let made = try make(address, machine, factory: factory, welcome: welcome, record: nil, startsNow: MachineAddress.hasKey(address))
        made.touch(sweep)
        instances[address] = made
        queueForSweep(address, made, machine: name)
        return made
    }

    /// The factory of a registered machine type.
}
