import Grove
import GroveCluster
@_spi(GroveInternal) import GroveWire
import Logging

/// What the worker's driver should do; produced by ``WorkerCore``.
enum WorkerAction: Sendable, Equatable {
    /// Send `register` on the current socket.
    case register
    /// Send `heartbeat` to the coordinator.
    case heartbeat
    /// Close the DEALER and open a new one to the same endpoint: what the old one queued for a
    /// coordinator that is gone is dropped with it.
    case reconnect
    /// Answer every io call waiting for a result from another worker with this failure: the
    /// coordinator that would have brought the result is gone or has forgotten the call. The
    /// core has forgotten them all when it says so (``failingCalls(_:)``), so their late results
    /// are dropped.
    case failRemoteCalls(IOCallResult.Failure)
    /// Let what the machines send (replies, state changes, outputs, io calls and results) leave
    /// for the coordinator: its welcome holds. The driver then says how many messages it
    /// dropped while closed (``reopened(dropped:)``).
    case openOutflow
    /// Drop what the machines send, counting it: the coordinator has given up on this session,
    /// so its replies answer nothing, and the socket they would wait on is about to go.
    case closeOutflow
    /// Host what `welcome` places here: drop the instances of the machines named in `dropping`
    /// (no longer placed here, or placed with another type), keep the others, start the single
    /// machines that are missing.
    case adopt(Welcome, dropping: Set<String>)
    /// Send `instances`: the keyed instances hosted here (kept, or coming back from the
    /// store), so the coordinator lists them without waiting for their next event.
    case reportInstances
    /// Replace the instance at the address, which ended, by a new one from its machine's
    /// initial state, and answer the admins' `restart` requests `answering` (correlations)
    /// with its state (`WorkerCore+Lifecycle.swift`).
    case restartInstance(String, answering: [UInt64])
    /// Drop the ended keyed instance at the address: its key is free, its memory released.
    case removeInstance(String)
    /// Stop the instance at the address (after the events queued before), for an admin's
    /// `restart`: its end restarts it.
    case stopInstance(String)
    /// Cancel the tasks of these local io calls and answer their machines with their failure
    /// (`timeout`): the core has forgotten them (`WorkerCore+LocalIO.swift`).
    case timeOutLocalCalls([WorkerCore.LocalTimeout])
    /// Drop these keyed instances from memory, their wake timers already forgotten by the core:
    /// another worker owns them in the shared store now (handoff). Their replies held in this
    /// turn become `unavailable` ("moved to another worker ...: retry"); nothing of them is
    /// written (`WorkerCore+Handoff.swift`).
    case dropMoved([String])
    /// Ask the shared store which in-memory keyed instances of handoff machines it still says
    /// are this worker's, and drop the others as ``dropMoved(_:)`` does: after a registration
    /// again (a pause, a partition), some may have been adopted meanwhile.
    case checkOwnership
    /// Something an operator should know.
    case log(Logger.Level, String)
    /// End the process, with the status and the line the reason gives (``WorkerExitReason``).
    case exit(WorkerExitReason)
}

/// The worker as a pure state machine: every message from the coordinator (``decide(_:payload:now:)``,
/// in `WorkerCore+Decisions.swift`), what its machines send on their own (io calls to other
/// workers and outputs, `WorkerCore+Machines.swift`), what is heard when, and clock ticks in;
/// decisions and actions out. No sockets, no threads: `WorkerRuntime` only executes what it says.
///
/// A worker registers and waits for a welcome; welcomed, it heartbeats at the welcome's
/// interval and watches the coordinator's heartbeats. Hearing nothing for the welcome's timeout
/// (the coordinator was killed, restarted or stalled), it fails its pending remote io calls and
/// reconnects the zguide's Paranoid Pirate way: after a backoff (100 ms, doubling to 5 s) a new
/// socket and a new registration, again after each attempt that brings no welcome within the
/// timeout. Its machines stay: a welcome after a re-registration keeps every instance whose
/// machine is still placed here with the same type.
struct WorkerCore {
    enum Session: Equatable {
        /// `register` went out on the current socket at `since`; no welcome yet. `attempt` counts
        /// the reconnections since the last welcome (0: the first registration of the socket the
        /// process started with, or a registration the coordinator asked for).
        case registering(attempt: Int, since: ContinuousClock.Instant)
        /// Welcomed, and the coordinator was heard within the timeout.
        case welcomed
        /// The coordinator fell silent, or did not welcome the last registration in time:
        /// reconnect at `reconnectAt` (attempt `attempt`).
        case silent(attempt: Int, reconnectAt: ContinuousClock.Instant)
    }

    /// The worker instance name.
    let worker: String
    /// The coordinator's workers endpoint, for messages.
    let coordinator: String
    /// The machine types this worker can host.
    let machineTypes: Set<String>
    /// Which process this is (`WorkerIncarnation.swift`).
    let incarnation: WorkerIncarnation
    /// The coordinator's epoch, from the last welcome.
    var epoch: UInt64?
    var session: Session
    /// From the last welcome; before the first, the topology defaults.
    var interval = Topology.Heartbeat().interval
    var timeout = Topology.Heartbeat().timeout
    /// When something last came from the coordinator (any message: heartbeats, requests, replies).
    var lastHeard: ContinuousClock.Instant
    /// When the driver last ticked; nil for a driver that does not tick.
    var lastTick: ContinuousClock.Instant?
    var lastHeartbeat: ContinuousClock.Instant?
    /// Since when the worker has been without a welcome, and when it last said so.
    var waitingSince: ContinuousClock.Instant?
    var toldAt: ContinuousClock.Instant?
    /// What the last welcome placed here, by machine name.
    var placed: [String: Welcome.HostedMachine] = [:]
    var lastWelcome: Welcome? {
        didSet { welcomed = lastWelcome != nil }
    }
    /// `lastWelcome != nil`, kept as it is set: per event, where comparing the optional would
    /// copy the whole welcome.
    private(set) var welcomed = false
    /// The io requests the last welcome places on other workers.
    var remoteIO: Set<String> = []
    /// The io calls of other workers' machines running here, by call id, until their task
    /// ends (`WorkerCore+Serving.swift`).
    var serving: [UInt64: Served] = [:]
    /// The calls whose task finished here lately (result sent), for answering an `io-cancel`
    /// that crossed the result.
    var finishedCalls = RecentIDs(capacity: 1024)
    /// The io calls this worker's machines sent to other workers and still wait for, by call id
    /// (the `io-request`'s correlation), with the address of the machine that sent each.
    var calls: [UInt64: String] = [:]
    /// The id of the next such call (and of the next local io call).
    var nextCall: UInt64 = 1
    /// io calls running on this worker's own handlers for its machines, by call id, until they
    /// end or time out (`WorkerCore+LocalIO.swift`).
    var localCalls: [UInt64: LocalCall] = [:]
    /// No local call's deadline is earlier: a tick before it looks at none.
    var earliestLocalDeadline: ContinuousClock.Instant?
    /// From the last welcome: the timeout of local io calls, and of those whose placement sets one.
    var ioTimeoutMs = Topology.IOLimits().timeoutMs
    var localIOTimeoutsMs: [String: Int] = [:]
    /// From the last welcome: the largest frame the coordinator accepts from this worker
    /// (`limits.messageBytes`); the link holds every message to it (``OutboundLimit``).
    var messageBytes = Topology.Limits().messageBytes
    /// The most envelopes a batch between the coordinator and this worker may hold, either way
    /// (the welcome's `batchEnvelopes`, `limits.batchEnvelopes`; before a welcome, the default).
    var batchEnvelopes = Topology.Limits().batchEnvelopes
    /// The instances that ended lately, or whose end an admin's `restart` waits for, by
    /// address (`WorkerCore+Lifecycle.swift`).
    var endings: [String: Ending] = [:]
    /// What the last process under this name died running (its flight recorder's note): sent
    /// with this process's registrations until the first welcome.
    var crashReport: CrashReport?
    /// Which idle keyed instances leave memory, and when those that left with a timer come
    /// back (`Passivation.swift`).
    var passivation = Passivation()
    /// The addresses whose move to another worker was logged (``movedAway(_:why:)``): each is
    /// said once, and the set is forgotten when it reaches ``movedToldCapacity``.
    var movedTold: Set<String> = []

    static let firstBackoff = Duration.milliseconds(100)
    static let maxBackoff = Duration.seconds(5)
    /// How long a worker waits for its first welcome before saying so, and then how often.
    static let firstNotice = Duration.seconds(3)
    static let noticeEvery = Duration.seconds(15)

    init(worker: String, coordinator: String, machineTypes: Set<String>, now: ContinuousClock.Instant,
         incarnation: WorkerIncarnation = .process) {
        self.worker = worker
        self.incarnation = incarnation
        self.coordinator = coordinator
        self.machineTypes = machineTypes
        session = .registering(attempt: 0, since: now)
        lastHeard = now
        waitingSince = now
    }

    /// What to do first: register.
    func start() -> [WorkerAction] { [.register] }

    var isWelcomed: Bool { session == .welcomed }

    /// How often the driver should tick: a fifth of the heartbeat interval (at least 10 ms), as
    /// the coordinator does, so heartbeats leave close to on time.
    var tickInterval: Duration { max(.milliseconds(10), interval / 5) }

    /// The wait before reconnection attempt `attempt` (1, 2, ...): 100 ms doubling, at most 5 s.
    static func backoff(attempt: Int) -> Duration {
        let doublings = min(max(attempt - 1, 0), 16)
        return min(firstBackoff * (1 << doublings), maxBackoff)
    }

    /// Something arrived from the coordinator. Called once per received batch (not per event).
    /// - Returns: `nil`: handle the batch. Otherwise the session is over and the batch must be
    ///   dropped unread, these actions carried out instead: the batch came after this worker's
    ///   own ticks had stopped for longer than the timeout (the process was stopped, SIGSTOP, or
    ///   its loop stalled). Its heartbeats, sent from those ticks, stopped as long, so the
    ///   coordinator has declared it lost, answered what it had sent here `worker-lost`, and may
    ///   have welcomed a newer process under its name since, whose requests (this process took
    ///   the name back when its socket reconnected) this one must not answer. Decided here
    ///   rather than at the next tick: the batch would otherwise count as proof of life and be
    ///   served first. Silence alone (a slow coordinator, while this worker ticked) is the
    ///   tick's to judge, as before.
    @inline(__always)
    mutating func heard(at now: ContinuousClock.Instant) -> [WorkerAction]? {
        if let lastTick, now - lastTick > timeout, session == .welcomed { return woke(after: now - lastTick, now: now) }
        lastHeard = now
        return nil
    }

    /// A batch of direct requests arrived (docs/DIRECT-ROUTES.md, 2.4): only the stall half of
    /// ``heard(at:)``. Direct traffic is not the coordinator's, so it never counts as hearing it
    /// (a flood of it would mask the coordinator's silence); but after a stall past the timeout
    /// the session is over before anything is served, as for a coordinator's batch.
    mutating func stalled(at now: ContinuousClock.Instant) -> [WorkerAction]? {
        guard let lastTick, now - lastTick > timeout, session == .welcomed else { return nil }
        return woke(after: now - lastTick, now: now)
    }

    /// Heartbeats, silence, reconnection attempts and notices; the machines' restarts that are
    /// due, whether the coordinator is there or not.
    mutating func tick(now: ContinuousClock.Instant) -> [WorkerAction] {
        lastTick = now
        let session = sessionTick(now: now) + expireLocalCalls(now: now)
        return endings.isEmpty ? session : session + restartsDue(now: now)
    }

    private mutating func sessionTick(now: ContinuousClock.Instant) -> [WorkerAction] {
        switch session {
        case .welcomed:
            let silence = now - lastHeard
            if silence > timeout {
                return fellSilent(after: silence, now: now)
            }
            guard lastHeartbeat.map({ now - $0 >= interval }) ?? true else { return [] }
            lastHeartbeat = now
            return [.heartbeat]
        case .registering(let attempt, let since):
            if now - since >= timeout {
                session = .silent(attempt: attempt + 1, reconnectAt: now + Self.backoff(attempt: attempt + 1))
            }
            return notice(now: now)
        case .silent(let attempt, let reconnectAt):
            guard now >= reconnectAt else { return notice(now: now) }
            session = .registering(attempt: attempt, since: now)
            return [.reconnect, .register] + notice(now: now)
        }
    }

    /// The coordinator was silent for longer than the timeout: fail what waits on it and
    /// reconnect after the first backoff.
    private mutating func fellSilent(after silence: Duration, now: ContinuousClock.Instant) -> [WorkerAction] {
        // Why first, then what was done about it: a reader of the log sees them in that order.
        endSession(failing: lostFailure(after: silence), now: now, why: "the coordinator at \(coordinator) was silent for \(silence.wholeMilliseconds) ms "
            + "(heartbeat timeout \(timeout.wholeMilliseconds) ms); failing this worker's pending remote io calls and reconnecting, "
            + "keeping its machines. If this repeats while the coordinator runs, raise heartbeat.timeoutMs in the topology")
    }

    /// A batch came after this worker did not run for longer than the timeout (see ``heard(at:)``).
    private mutating func woke(after stall: Duration, now: ContinuousClock.Instant) -> [WorkerAction] {
        let failure = IOCallResult.Failure(code: IOFailure.Code.coordinatorLost.rawValue,
            message: "this worker did not run for \(stall.wholeMilliseconds) ms and the coordinator at \(coordinator) has given up "
                + "its session; the call's result cannot arrive. Retry once the worker is registered again")
        return endSession(failing: failure, now: now, why: "this worker did not run for \(stall.wholeMilliseconds) ms "
            + "(heartbeat timeout \(timeout.wholeMilliseconds) ms): this process was stopped or stalled, so the coordinator at "
            + "\(coordinator) has given up its session. Dropping what just came unread (it answers nothing now, or belongs to a newer "
            + "process under this name), failing this worker's pending remote io calls and registering again, keeping its machines")
    }

    private mutating func endSession(failing failure: IOCallResult.Failure, now: ContinuousClock.Instant, why: String) -> [WorkerAction] {
        session = .silent(attempt: 1, reconnectAt: now + Self.backoff(attempt: 1))
        waitingSince = now
        toldAt = nil
        lastHeartbeat = nil
        return [.log(.warning, why), .closeOutflow, failingCalls(failure)]
    }

    func lostFailure(after silence: Duration) -> IOCallResult.Failure {
        IOCallResult.Failure(code: IOFailure.Code.coordinatorLost.rawValue,
            message: "the coordinator at \(coordinator) was silent for \(silence.wholeMilliseconds) ms; "
                + "the call's result cannot arrive. Retry once the worker is registered again")
    }

    /// The driver opened the outflow (``WorkerAction/openOutflow``) after dropping `dropped`
    /// messages while it was closed: said once, so an operator can tell a lost session's replies
    /// from a bug.
    func reopened(dropped: Int) -> [WorkerAction] {
        guard dropped > 0 else { return [] }
        return [.log(.notice, "dropped \(dropped) message(s) this worker's machines sent while the coordinator had given up on "
            + "its session (replies to requests already answered worker-lost or lost with the coordinator, state changes, outputs)")]
    }

    /// The "not registered yet" notice: after 3 s without a welcome, then every 15 s.
    private mutating func notice(now: ContinuousClock.Instant) -> [WorkerAction] {
        guard let waitingSince, now - waitingSince >= Self.firstNotice,
              toldAt.map({ now - $0 >= Self.noticeEvery }) ?? true else { return [] }
        toldAt = now
        return [.log(.notice, """
            not registered yet: no welcome from a coordinator at \(coordinator) in \((now - waitingSince).components.seconds) s; \
            retrying. Is the topology running, and is that its coordinator.workers endpoint?
            """)]
    }
}

