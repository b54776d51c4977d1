import GroveWire

extension WorkerCore {
    /// What the worker remembers of one instance's ends: for `onEnd: "restart"`, when it ended
    /// lately and when it starts again; for an admin's `restart`, who waits for the new instance.
    struct Ending: Equatable {
        /// When it ended within the last ``WorkerCore/restartPeriod``, oldest first.
        var ends: [ContinuousClock.Instant] = []
        /// When the policy restarts it; nil when no restart is scheduled.
        var restartAt: ContinuousClock.Instant?
        /// It ended more often than ``WorkerCore/restartIntensity`` allows: it stays ended until
        /// an admin restarts it.
        var gaveUp = false
        /// The correlations of admins' `restart` requests waiting for its end (it was running;
        /// it was told to stop), answered with the new instance's state.
        var waiting: [UInt64] = []
    }

    /// Ends allowed within ``restartPeriod`` for a machine that restarts: one more and it stays
    /// ended, as an OTP supervisor past its restart intensity gives up.
    static let restartIntensity = 5
    static let restartPeriod = Duration.seconds(10)
    static let firstRestartWait = Duration.milliseconds(100)
    static let maxRestartWait = Duration.seconds(5)

    /// The wait before restarting an instance that ended `ends` times within ``restartPeriod``
    /// (this end included): 100 ms, doubled for each earlier end, at most 5 s.
    static func restartWait(ends: Int) -> Duration {
        let doublings = min(max(ends - 1, 0), 16)
        return min(firstRestartWait * (1 << doublings), maxRestartWait)
    }

    /// The `onEnd` policy of the machine `address` names, as the last welcome placed it.
    func endPolicy(of address: String) -> EndPolicy {
        let name = address.split(separator: "/", maxSplits: 1).first.map(String.init) ?? address
        return placed[name]?.onEnd ?? .stay
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
            guard address.contains("/") else { return [] }
            return [.removeInstance(address)]
        case .restart:
            return scheduleRestart(address, now: now)
        }
    }

    private mutating func scheduleRestart(_ address: String, now: ContinuousClock.Instant) -> [WorkerAction] {
        var ending = endings[address] ?? Ending()
        guard ending.restartAt == nil, !ending.gaveUp else { return [] }
        ending.ends = ending.ends.filter { now - $0 < Self.restartPeriod } + [now]
        guard ending.ends.count <= Self.restartIntensity else {
            ending.gaveUp = true
            endings[address] = ending
            return [.log(.error, "machine \(address) ended \(ending.ends.count) times within \(Self.restartPeriod.wholeMilliseconds / 1000) s; "
                + "it is not restarted again and answers machine-ended (onEnd \"restart\" allows \(Self.restartIntensity) ends in that time). "
                + "Find out why it ends (its machine: events on the topic machine:\(address)), then restart it with fsm-send restart \(address)")]
        }
        let wait = Self.restartWait(ends: ending.ends.count)
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
            } else if ending.restartAt == nil, !ending.gaveUp, ending.waiting.isEmpty,
                      ending.ends.allSatisfy({ now - $0 >= Self.restartPeriod }) {
                endings[address] = nil
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
        endings = endings.filter { address, _ in
            !machines.contains(address.split(separator: "/", maxSplits: 1).first.map(String.init) ?? address)
        }
    }
}
