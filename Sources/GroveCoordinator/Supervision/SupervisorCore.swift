import Foundation
package import GroveCluster
package import Logging

/// How a worker process ended.
package enum WorkerExit: Sendable, Equatable, CustomStringConvertible {
    /// It exited with this status.
    case status(Int32)
    /// A signal ended it.
    case signal(Int32)

    package var description: String {
        switch self {
        case .status(let status): "exited with status \(status)"
        case .signal(let signal): "killed by signal \(signal)"
        }
    }
}

/// What `fsm-launch` should do for the worker processes it supervises; produced by
/// ``SupervisorCore``.
package enum SupervisorAction: Sendable, Equatable {
    /// Start the worker's process now and report it with ``SupervisorCore/started(_:pid:now:)``
    /// (or ``SupervisorCore/exited(_:pid:_:now:)`` when it could not be started).
    case start(worker: String)
    /// Call ``SupervisorCore/due(_:now:registered:)`` for the worker at `deadline`: its backoff
    /// ends, or the time it had to register again is up.
    case wake(worker: String, at: ContinuousClock.Instant)
    /// Kill the process with SIGKILL: it stopped answering. Its exit is reported as any other.
    case kill(worker: String, pid: Int32)
    /// Tell the coordinator that the worker's process ended, before anything else is done
    /// about it (a successor started): it fails what waited on the process, and its
    /// successor's report of the event it died running is counted against that event only
    /// when `blamesEvent` (not for a kill from outside, which lands in an innocent event).
    case report(worker: String, pid: Int32, WorkerExit, blamesEvent: Bool)
    /// Tell the operator.
    case log(Logger.Level, String, worker: String)
    /// Stop the coordinator and every worker, and exit non-zero: a group gave up and its policy
    /// escalates (or the topology never became ready).
    case escalate(String)
}

/// The restart policy of `fsm-launch` as a pure state machine: process starts, exits, losses
/// the coordinator saw and timer wake-ups in, actions out. No processes, no clocks of its own,
/// so every rule is unit-tested with made-up instants.
///
/// Each worker group is one supervisor in OTP's sense: its instances' exits count together
/// against the group's ``Topology/Supervision/intensity`` within its period; a worker is
/// restarted after a backoff that doubles with each restart in a row and starts over once a
/// worker has run for ``Topology/Supervision/Backoff/resetAfterMs``.
package struct SupervisorCore {
    struct Child {
        let group: Int
        var pid: Int32?
        var startedAt: ContinuousClock.Instant?
        /// Restarts since the worker last ran for the backoff's reset period.
        var restartsInRow = 0
        /// When a restart is waiting for its backoff.
        var wakeAt: ContinuousClock.Instant?
        /// Killed for silence: a second loss report does not kill it again.
        var killed = false
        /// Its connection to the coordinator was lost while it ran: by then it must have
        /// registered again, or it is killed.
        var reconnectBy: ContinuousClock.Instant?
        var down = false
    }

    let groups: [Topology.WorkerGroup]
    /// How long a worker whose connection was lost has to register again: twice the heartbeat
    /// timeout (it notices the silence within one, then reconnects).
    let reconnectGrace: Duration
    private(set) var children: [String: Child] = [:]
    /// One exit counted toward a group's intensity.
    struct Exit: Equatable {
        let at: ContinuousClock.Instant
        let worker: String
        /// Nil for a process that could not be started.
        let pid: Int32?
    }

    /// Recent exits per group (by index), for the intensity limit.
    private var exits: [Int: [Exit]] = [:]
    /// Whether every worker registered once: giving up before that fails the launch whatever
    /// the policy says.
    package private(set) var ready = false
    package private(set) var stopping = false

    /// Supervises every group of `topology` that is not external.
    package init(topology: Topology) {
        groups = topology.workers
        reconnectGrace = .milliseconds(2 * topology.heartbeat.timeoutMs)
        for (index, group) in topology.workers.enumerated() where !group.external {
            for name in group.instanceNames { children[name] = Child(group: index) }
        }
    }

    /// The workers to start, in topology order.
    package mutating func startAll() -> [SupervisorAction] {
        groups.flatMap { group in group.external ? [] : group.instanceNames.map { SupervisorAction.start(worker: $0) } }
    }

    /// The worker's process was started.
    package mutating func started(_ worker: String, pid: Int32, now: ContinuousClock.Instant) {
        guard children[worker] != nil else { return }
        children[worker]?.pid = pid
        children[worker]?.startedAt = now
        children[worker]?.killed = false
        children[worker]?.reconnectBy = nil
    }

    /// Every worker registered: from now on a group that gives up follows its policy.
    package mutating func becameReady() { ready = true }

    /// The topology is stopping: nothing is restarted any more.
    package mutating func stop() { stopping = true }

    /// The worker's process ended (or could not be started: pass the status it would have had).
    /// The coordinator is told first (``SupervisorAction/report(worker:pid:_:blamesEvent:)``),
    /// for a process this core started and has not seen end yet: the exit of an earlier process,
    /// reaped late, says nothing about the one registered now.
    package mutating func exited(_ worker: String, pid: Int32?, _ exit: WorkerExit, now: ContinuousClock.Instant) -> [SupervisorAction] {
        guard !stopping, var child = children[worker], pid == nil || child.pid == nil || child.pid == pid else { return [] }
        let ranFor = child.startedAt.map { now - $0 }
        var report: [SupervisorAction] = []
        if let pid, child.pid == pid { report = [.report(worker: worker, pid: pid, exit, blamesEvent: Self.blamesEvent(exit, killed: child.killed))] }
        child.pid = nil
        child.startedAt = nil
        child.reconnectBy = nil
        defer { children[worker] = child }
        let group = groups[child.group]
        let policy = group.supervision
        if case .status(let status) = exit, policy.finalExitCodes.contains(status) {
            child.down = true
            return report + giveUp(worker, "worker \(worker) \(exit), a final exit status for group '\(group.name)' (supervision.finalExitCodes): "
                + "its command line or configuration was refused (see its message above); restarting cannot help. "
                + "Fix the topology or the worker", policy: policy)
        }
        let period = Duration.milliseconds(policy.periodMs)
        exits[child.group, default: []].removeAll { now - $0.at >= period }
        exits[child.group, default: []].append(Exit(at: now, worker: worker, pid: pid))
        let recent = exits[child.group]!.count
        guard recent <= policy.intensity else {
            child.down = true
            return report + giveUp(worker, "worker \(worker) \(exit): group '\(group.name)' had \(recent) exits within \(policy.periodMs) ms, "
                + "more than its supervision.intensity of \(policy.intensity); see the workers' output above", policy: policy)
        }
        if let ranFor, ranFor >= .milliseconds(policy.backoff.resetAfterMs) { child.restartsInRow = 0 }
        let delay = policy.backoff.delay(afterRestartsInRow: child.restartsInRow)
        child.restartsInRow += 1
        let notice = SupervisorAction.log(.warning, "worker \(exit); restarting it in \(delay.wholeMilliseconds) ms", worker: worker)
        guard delay > .zero else { return report + [notice, .start(worker: worker)] }
        child.wakeAt = now + delay
        return report + [notice, .wake(worker: worker, at: now + delay)]
    }

    /// Whether a process that ended by `exit` may be blamed on the event it was running: a
    /// trap, an exit status, or a kill of ours after it hung (`killed`) may; SIGKILL, SIGTERM,
    /// SIGINT, SIGHUP or SIGQUIT from someone else (an operator's kill -9) may not.
    static func blamesEvent(_ exit: WorkerExit, killed: Bool) -> Bool {
        switch exit {
        case .status:
            return true
        case .signal(let signal):
            return killed || ![SIGKILL, SIGTERM, SIGINT, SIGHUP, SIGQUIT].contains(signal)
        }
    }

    /// The coordinator found that process `pid` of `worker` crashed on input now quarantined or
    /// suspended: its exit no longer counts toward the group's intensity. One client's input
    /// may cost a worker its restarts; it must not stop the topology.
    package mutating func forgive(_ worker: String, pid: Int32, reason: String) -> [SupervisorAction] {
        guard let child = children[worker],
              let index = exits[child.group]?.firstIndex(where: { $0.worker == worker && $0.pid == pid }) else { return [] }
        exits[child.group]?.remove(at: index)
        let group = groups[child.group]
        return [.log(.notice, "the exit of worker pid \(pid) no longer counts toward group '\(group.name)''s supervision.intensity: \(reason)",
                     worker: worker)]
    }

    /// A worker's backoff ended: start it, unless stopping or started meanwhile. Or the time a
    /// worker had to register again after losing its connection is up: killed unless
    /// `registered` (the coordinator has it registered now).
    package mutating func due(_ worker: String, now: ContinuousClock.Instant, registered: Bool = false) -> [SupervisorAction] {
        guard !stopping, let child = children[worker] else { return [] }
        if let deadline = child.reconnectBy, now >= deadline {
            children[worker]?.reconnectBy = nil
            guard let pid = child.pid, !child.killed, !registered else { return [] }
            children[worker]?.killed = true
            return [.log(.warning, "worker pid \(pid) did not register again within \(reconnectGrace.wholeMilliseconds) ms of losing its "
                         + "connection to the coordinator; killing it (SIGKILL) to restart it", worker: worker),
                    .kill(worker: worker, pid: pid)]
        }
        guard let wakeAt = child.wakeAt, now >= wakeAt, child.pid == nil else { return [] }
        children[worker]?.wakeAt = nil
        return [.start(worker: worker)]
    }

    /// The coordinator declared the worker lost. A process of ours that went silent is alive
    /// but not serving (hung, stopped with SIGSTOP): it is killed, and its exit restarts it by
    /// the policy. One that is unreachable (its connection is gone) is given
    /// ``reconnectGrace`` to register again, as a live worker does after it reconnects (the
    /// coordinator itself was stopped a while, say): killed then only if it has not
    /// (``due(_:now:registered:)``), so that it keeps its machines.
    /// - Parameter lostPID: The process the coordinator lost, when it knew it: a loss reported
    ///   for a process that has exited and been restarted since is not the new one's.
    package mutating func lost(_ worker: String, pid lostPID: Int32? = nil, cause: WorkerLoss,
                               now: ContinuousClock.Instant) -> [SupervisorAction] {
        guard !stopping, let child = children[worker], let pid = child.pid, !child.killed else { return [] }
        if let lostPID, lostPID != pid { return [] }
        switch cause {
        case .silent:
            children[worker]?.killed = true
            return [.log(.warning, "worker pid \(pid) is running but lost to the coordinator (\(cause)); killing it (SIGKILL) to restart it",
                         worker: worker),
                    .kill(worker: worker, pid: pid)]
        case .unreachable:
            guard child.reconnectBy == nil else { return [] }
            children[worker]?.reconnectBy = now + reconnectGrace
            return [.log(.notice, "worker pid \(pid) is running but its connection to the coordinator is gone; waiting up to "
                         + "\(reconnectGrace.wholeMilliseconds) ms for it to register again", worker: worker),
                    .wake(worker: worker, at: now + reconnectGrace)]
        case .registeredAgain, .exited:
            return []
        }
    }

    private mutating func giveUp(_ worker: String, _ message: String, policy: Topology.Supervision) -> [SupervisorAction] {
        guard ready else {
            return [.escalate(message + ". The topology did not become ready")]
        }
        switch policy.onGiveUp {
        case .escalate:
            return [.escalate(message + ". Stopping the topology (supervision.onGiveUp is \"escalate\")")]
        case .stayDown:
            return [.log(.error, message + ". Not restarting it: its machines stay unavailable while the rest keeps running "
                         + "(supervision.onGiveUp is \"stay-down\"; relaunch to bring it back)", worker: worker)]
        }
    }
}
