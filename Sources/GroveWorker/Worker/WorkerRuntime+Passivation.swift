import Grove
import GroveCluster
import GroveRuntime
@_spi(GroveInternal) import GroveWire

// Passivation (issue 37): idle keyed instances leave memory; the next message to one, or its
// earliest timer, brings it back from the store as recovery does. What is idle, when, and who
// wakes is `Passivation`'s (pure); this only carries it out.

extension WorkerRuntime {
    /// Slots of the state tables walked per tick, shared among them: a slot is read in order
    /// and judged by one comparison, so a tick walks more of them than the hosts it judges
    /// (``Passivation/judgedPerTick``), yet few enough that a tick that drops every entry it
    /// walks (each removal shifts its run back) holds the loop for milliseconds, not tens: a
    /// table of a million entries (two million slots) goes round in 32 ticks.
    static let tableSlotsPerTick = 65_536

    /// A part of a sweep, at each tick while one is under way (``Passivation/toJudge``, at most
    /// ``Passivation/judgedPerTick`` hosts, and the state tables' next ``tableSlotsPerTick``
    /// slots): each instance of a passivating machine that the core judges idle long enough
    /// leaves memory, durable ones after a commit of what they ran since the last (so their
    /// record is whole), with their timers' wake times kept in the core.
    func passivateIdle(now: ContinuousClock.Instant) {
        guard core.passivation.period != nil else { return }
        var written = 0, dropped = 0
        defer {
            // At every tick, so what the last lines' window summed is told once it is over.
            if let line = Passivation.line(&passivationTally, written: written, dropped: dropped, live: instances.count + tableEntryCount,
                                           waiting: core.passivation.waitingForTimers, now: now) {
                log.notice("\(line)")
            }
        }
        let addresses = core.passivation.toJudge(now: now, live: Array(instances.keys))
        let judging = core.passivation.judging
        // Resting instances: each table walked in slot order, a part per tick, its idle
        // entries dropped; they are not queued per key as hosts are. What a table leaves of
        // the tick's slots (its round for this sweep done) goes to the next, and each gets its
        // equal part at least: a tick walks at most twice ``tableSlotsPerTick``.
        if !stateTables.isEmpty {
            var left = Self.tableSlotsPerTick
            let share = max(1, Self.tableSlotsPerTick / stateTables.count)
            for (machine, table) in stateTables {
                guard let idleThrough = judging.idleThrough(machine: machine) else { continue }
                let part = table.sweep(judging.sweep, idleThrough: idleThrough, slots: max(share, left))
                dropped += part.dropped
                left = max(0, left - part.walked)
            }
        }
        guard !addresses.isEmpty else { return }
        var leaving: [(address: String, instance: any HostedMachine, verdict: Passivation.Verdict)] = []
        let full = core.passivation.walkIsFull
        for address in addresses {
            let machine = MachineAddress.machine(of: address)
            // One a message ended, or that left, since the sweep began is not judged; nor an
            // entry the instance no longer stands for (it was queued again since, or made anew).
            guard let instance = instances[address], full || instance.judgedAtSweep == judging.sweep else { continue }
            let touched = instance.touchedSweep
            // Judged by what the sweep took once (``Passivation/judging``), not by calls on
            // `core.passivation`, each of which would work on a copy of it.
            var verdict = Passivation.Verdict.stay
            if judging.idleLongEnough(machine: machine, touched: touched) {
                verdict = Passivation.verdict(resting: instance.resting, durable: instance.durability != .none)
            }
            if verdict != .stay {
                leaving.append((address, instance, verdict))
            } else if let at = core.passivation.queue(address, machine: machine, touched: touched) {
                // Reached since, or holding work: judged again when it may have been idle
                // long enough, not at every sweep.
                instance.judge(atSweep: at)
            }
        }
        guard !leaving.isEmpty else { return }
        // What they ran since the last commit goes to the store before they leave.
        commitTurn()
        for (address, instance, verdict) in leaving {
            // Removed and put back when it is not the one judged: one lookup, not two, for
            // each that leaves. One the commit found moved to another worker has left already
            // (``dropMoved(_:)``).
            guard let held = instances.removeValue(forKey: address) else { continue }
            guard held === instance else {
                instances[address] = held
                continue
            }
            instance.passivate()
            switch verdict {
            case .passivate(let wakeAt):
                core.passivation.passivated(address, wakeAt: wakeAt)
                written += 1
            case .drop:
                dropped += 1
            case .stay:
                break
            }
        }
        scheduleWake()
    }

    /// Queues `instance`, new in memory at `address`, to be judged at the first sweep it may
    /// have been idle long enough (nothing for a machine that does not passivate).
    func queueForSweep(_ address: String, _ instance: any HostedMachine, machine: String) {
        let touched = instance.touchedSweep
        if let at = core.passivation.queue(address, machine: machine, touched: touched) { instance.judge(atSweep: at) }
    }

    /// Brings back the passivated instances whose timers fall due now: restored from the store,
    /// their timers fire as recovery's do.
    func wakeDue() {
        let due = core.passivation.due(now: clock.now())
        for address in due where instances[address] == nil {
            _ = restorePassivated(address)
        }
        scheduleWake()
    }

    /// One timer on ``clock`` for the earliest wake, replaced when that changes.
    func scheduleWake() {
        let earliest = core.passivation.earliestWake
        guard earliest != scheduledWake?.at else { return }
        scheduledWake?.timer.cancel()
        scheduledWake = nil
        guard let earliest else { return }
        let loop = link.loop
        let timer = clock.schedule(at: earliest) { [weak self] in
            loop.spawn { [weak self] in await self?.wakeDue() }
        }
        scheduledWake = (earliest, timer)
    }

    /// The instance at `address` brought back from the store, when its machine passivates and
    /// the store holds its record: a `journal` instance's entries after the record replayed, as
    /// recovery does. Nil otherwise (a key never used, or not durable: it starts afresh). A key
    /// never used is known without reading the store, for a machine that does not hand off
    /// (``StoredKeys``).
    func restorePassivated(_ address: String) -> (any HostedMachine)? {
        let name = MachineAddress.machine(of: address)
        return restorePassivated(address, of: name, placed: core.placed[name])
    }

    /// ``restorePassivated(_:)`` given its machine's name and what the core places of it
    /// (`core.placed`), which the caller looked up already.
    func restorePassivated(_ address: String, of name: String, placed: Welcome.HostedMachine?) -> (any HostedMachine)? {
        guard let machine = placed, (machine.durability ?? .none) != .none, core.passivation.passivates(name), let store
        else { return nil }
        core.passivation.cameBack(address)
        if machine.handoff == true {
            storedKeys.uncover(name)
        } else if !storedKeys.covered.contains(name) {
            cover(name, in: store)
        }
        guard storedKeys.mayHold(address, machine: name) else { return nil }
        let record: MachineRecord?
        do {
            record = try store.record(of: address)
        } catch {
            failed(.journalRead(address: address, "its passivated record could not be read: " + error.message))
            return nil
        }
        guard let record, record.type == machine.type else { return nil }
        recovery.waiting[address] = record
        return restoreIfWaiting(address)
    }
}

extension WorkerRuntime {
    /// Covers machine `name` in ``storedKeys``: the addresses the store lists of it, and those
    /// of its instances in memory or waiting to come back, which may be written later. Once per
    /// machine, at the first key it starts; a store that cannot list them leaves it uncovered
    /// (each key read, as before), to try again at the next.
    func cover(_ name: String, in store: any MachineStore) {
        let stored: [StoredInstance]
        do {
            stored = try store.keyedInstances(of: name)
        } catch {
            log.warning("the instances of \(name) could not be listed from the store: \(error.message); each new key of it is read from the store")
            return
        }
        let held = instances.keys.filter { MachineAddress.machine(of: $0) == name }
            + recovery.waiting.keys.filter { MachineAddress.machine(of: $0) == name }
        storedKeys.covered(name, by: stored.lazy.map(\.address) + held)
    }
}
