import GroveCluster
@_spi(GroveInternal) import GroveWire

extension WorkerCore {
    /// What the worker remembers of one instance's ends: for `onEnd: "restart"`, when it ended
    /// lately and when it starts again; for an admin's `restart`, who waits for the new instance.
    struct Ending: Equatable {
        /// When it ended within the last period of its machine's ``RestartPolicy``, oldest first.
        var ends: [ContinuousClock.Instant] = []
        /// When the policy restarts it; nil when no restart is scheduled.
        var restartAt: ContinuousClock.Instant?
        /// It ended more often than its machine's restart intensity allows: it stays ended until
        /// an admin restarts it.
        var gaveUp = false
        /// The correlations of admins' `restart` requests waiting for its end (it was running;
        /// it was told to stop), answered with the new instance's state.
        var waiting: [UInt64] = []
    }

    /// The machine name of `address` (`form`, or `session` for `session/k`).
    static func machineName(of address: String) -> String {
        MachineAddress.machine(of: address)
    }

    /// The `onEnd` policy of the machine `address` names, as the last welcome placed it.
    func endPolicy(of address: String) -> EndPolicy {
        placed[Self.machineName(of: address)]?.onEnd ?? .stay
    }

    /// How the machine `address` names restarts, as the last welcome placed it (absent: the
    /// defaults, 5 ends in 10 s, 100 ms doubling to 5 s).
    func restartPolicy(of address: String) -> RestartPolicy {
        placed[Self.machineName(of: address)]?.restart ?? RestartPolicy()
    }

    /// The instance at `address` ended (a terminal state, a stop, a failure): what its machine's
    /// `onEnd` says, unless an admin's `restart` waits for this end, which restarts it now.
    mutating func machineEnded(_ address: String, now: ContinuousClock.Instant) -> [WorkerAction] {
        if let waiting = endings[address]?.waiting, !waiting.isEmpty {
            endings[address] = nil
            return [.restartInstance(address, answering: waiting)]
        }
        switch endPolicy(of: address) {
        case .stay:
            return []
        case .remove:
            // The topology allows `remove` for keyed machines only; a single machine stays.
            guard MachineAddress.hasKey(address) else { return [] }
            return [.removeInstance(address)]
        case .restart:
            return scheduleRestart(address, now: now)
        }
    }

    private mutating func scheduleRestart(_ address: String, now: ContinuousClock.Instant) -> [WorkerAction] {
        var ending = endings[address] ?? Ending()
        guard ending.restartAt == nil, !ending.gaveUp else { return [] }
        let policy = restartPolicy(of: address)
        ending.ends = ending.ends.filter { now - $0 < policy.period } + [now]
        guard ending.ends.count <= policy.intensity else {
            ending.gaveUp = true
            endings[address] = ending
            let window = policy.periodMs % 1000 == 0 ? "\(policy.periodMs / 1000) s" : "\(policy.periodMs) ms"
            return [.log(.error, "machine \(address) ended \(ending.ends.count) time\(ending.ends.count == 1 ? "" : "s") within \(window); "
                + "it is not restarted again and answers machine-ended (its topology's restart.intensity allows \(policy.intensity) ends in restart.periodMs). "
                + "Find out why it ends (its machine: events on the topic machine:\(address)), then restart it with fsm-send restart \(address)")]
        }
        let wait = policy.wait(ends: ending.ends.count)
        ending.restartAt = now + wait
        endings[address] = ending
        return [.log(.info, "machine \(address) ended; restarting it from its initial state in \(wait.wholeMilliseconds) ms (onEnd \"restart\")")]
    }

    /// The restarts due by `now`, in address order; forgets the ends older than the restart
    /// period of instances that run again.
    mutating func restartsDue(now: ContinuousClock.Instant) -> [WorkerAction] {
        guard !endings.isEmpty else { return [] }
        var due: [String] = []
        for (address, ending) in endings {
            if let at = ending.restartAt, now >= at {
                due.append(address)
                endings[address]?.restartAt = nil
            } else if ending.restartAt == nil, !ending.gaveUp, ending.waiting.isEmpty {
                let period = restartPolicy(of: address).period
                if ending.ends.allSatisfy({ now - $0 >= period }) { endings[address] = nil }
            }
        }
        return due.sorted().map { .restartInstance($0, answering: []) }
    }

    /// An admin's `restart` of the instance at `address`, request `correlation`: an ended one
    /// starts again now; a running one is stopped first (after the events queued before) and
    /// starts again when its end comes (``machineEnded(_:now:)``). Either way its policy's
    /// pending restart, or its giving up, is forgotten: the admin's restart replaces them.
    /// - Parameter running: Whether the instance has not ended yet.
    mutating func restartRequested(_ address: String, correlation: UInt64, running: Bool) -> [WorkerAction] {
        guard running else {
            let waiting = endings.removeValue(forKey: address)?.waiting ?? []
            return [.restartInstance(address, answering: waiting + [correlation])]
        }
        let stopping = !(endings[address]?.waiting.isEmpty ?? true)
        endings[address] = Ending(waiting: (endings[address]?.waiting ?? []) + [correlation])
        // Already told to stop for an earlier request: its end answers both.
        return stopping ? [] : [.stopInstance(address)]
    }

    /// Forgets the ends of the instances of `machines`, whose instances the worker drops.
    mutating func forgetEndings(of machines: Set<String>) {
        guard !machines.isEmpty else { return }
        endings = endings.filter { address, _ in !machines.contains(Self.machineName(of: address)) }
    }
}

extension RestartPolicy {
    /// ``periodMs`` as a duration.
    var period: Duration { .milliseconds(periodMs) }

    /// The wait before restarting an instance that ended `ends` times within ``period`` (this
    /// end included): ``Backoff/initialMs``, doubled for each earlier end, at most
    /// ``Backoff/maxMs``.
    func wait(ends: Int) -> Duration {
        var milliseconds = backoff.initialMs
        for _ in 1..<min(max(ends, 1), 64) where milliseconds < backoff.maxMs { milliseconds *= 2 }
        return .milliseconds(min(milliseconds, backoff.maxMs))
    }
}
