import Foundation
import GroveCluster
@_spi(GroveInternal) import GroveWire

/// What the coordinator knows of the processes that registered under one worker name.
///
/// A worker process picks its incarnation at start (a random 64-bit number, with its start
/// time). The newest process wins a name: one that comes back (the same incarnation, after a
/// SIGSTOP or a network blip) is welcomed and keeps its machines; one that was replaced, or
/// that started before the registered one, is refused with `superseded` and stops, so two
/// processes never serve two copies of the same machines.
struct Incarnations {
    struct Process: Equatable {
        let id: UInt64
        let startedAtMs: Int64
        let pid: Int32
    }

    /// The process registered last under the name (registered still, or lost since).
    var current: Process?
    /// Incarnations a newer one replaced, newest last: refused should they come back, even
    /// when their clock says otherwise.
    var retired: [Process] = []
    /// Refused incarnations already logged: each is logged once, however often it retries.
    var logged: Set<UInt64> = []
    /// The heartbeat payload naming ``current``, made once per registration.
    var heartbeat: [UInt8] = []

    static let retiredKept = 8

    /// What becomes of a registration by `process`.
    enum Verdict: Equatable {
        /// The registered process again, or the first one since this coordinator started.
        case admitted
        /// A newer process: it replaces `old`.
        case replaces(Process)
        /// An older process than `current`: `replaced` when a newer one took its place in
        /// this coordinator's life, else it merely started earlier.
        case superseded(by: Process, replaced: Bool)
        /// A process its launcher saw end (``retire(pid:)``), none registered since: what it
        /// sent before it ended comes late.
        case ended(Process)
    }

    func verdict(on process: Process) -> Verdict {
        if current == nil, let ended = retired.last(where: { $0.id == process.id }) { return .ended(ended) }
        guard let current, current.id != process.id else { return .admitted }
        if retired.contains(where: { $0.id == process.id }) { return .superseded(by: current, replaced: true) }
        if process.startedAtMs < current.startedAtMs { return .superseded(by: current, replaced: false) }
        return .replaces(current)
    }

    /// The current process, `pid`, ended (its launcher saw it): retired, so that a registration
    /// it sent before it ended and that is read late is refused (`superseded`) instead of
    /// registering a dead process, whose heartbeats would reach its successor under the name.
    mutating func retire(pid: Int32) {
        guard let current, current.pid == pid else { return }
        retired.append(current)
        if retired.count > Self.retiredKept { retired.removeFirst() }
        self.current = nil
        heartbeat = []
    }

    /// Notes `process` as the one registered, retiring the one it replaces.
    mutating func register(_ process: Process) {
        if let current, current.id != process.id {
            retired.append(current)
            if retired.count > Self.retiredKept { retired.removeFirst() }
        }
        current = process
        heartbeat = (try? WireJSON.encode(HeartbeatNote(incarnation: process.id))) ?? []
    }
}

/// The coordinator's wall clock, read off its monotonic one from one reading of both: a pure
/// core reads no clock, and a wall clock set back or forward while it runs moves nothing here.
struct CoordinatorWallClock: Sendable, Equatable {
    /// An instant of the monotonic clock…
    let instant: ContinuousClock.Instant
    /// …and the wall clock then, in milliseconds since 1970.
    let millisecondsSince1970: Int64

    /// Both clocks, now.
    static var now: CoordinatorWallClock {
        CoordinatorWallClock(instant: .now, millisecondsSince1970: Int64((Date().timeIntervalSince1970 * 1000).rounded()))
    }

    /// The wall clock at `instant`, in milliseconds since 1970.
    func milliseconds(at instant: ContinuousClock.Instant) -> Int64 {
        let elapsed = (instant - self.instant).components
        return millisecondsSince1970 + elapsed.seconds * 1000 + elapsed.attoseconds / 1_000_000_000_000_000
    }
}

extension CoordinatorCore {
    /// Checks a registration's incarnation against the processes seen under its name: nil when
    /// it may register (noted as the current one), else the refusal to send to connection
    /// `identity`, `superseded`, logged once per refused incarnation with both incarnations. A
    /// registration without an incarnation (an older worker) registers as before and clears what
    /// was known.
    ///
    /// The coordinator decides which process is newer, not the worker: a start time later than
    /// the registration's arrival (`now`, on this coordinator's clock) counts as that arrival, so
    /// a process that claims to start in the future is newer than none started after it came,
    /// and is replaced by the next one, as any process is.
    mutating func admitIncarnation(_ name: String, _ registration: Registration, on identity: [UInt8], correlation: UInt64,
                                   now: ContinuousClock.Instant) -> [CoordinatorAction]? {
        guard let id = registration.incarnation else {
            incarnations[name] = nil
            return nil
        }
        var known = incarnations[name] ?? Incarnations()
        // The same process coming back keeps the start it was first given: clamped again at its
        // later arrival, it would turn newer than processes started in between.
        let started = known.current.flatMap { $0.id == id ? $0.startedAtMs : nil }
            ?? min(registration.startedAtMs ?? 0, wallClock.milliseconds(at: now))
        let process = Incarnations.Process(id: id, startedAtMs: started, pid: registration.pid)
        let verdict = known.verdict(on: process)
        switch verdict {
        case .admitted, .replaces:
            known.register(process)
            incarnations[name] = known
            return nil
        case .superseded, .ended:
            let why = switch verdict {
            case .superseded(let newer, true): "incarnation \(newer.id) (pid \(newer.pid)) replaced it"
            case .superseded(let newer, false): "it started before incarnation \(newer.id) (pid \(newer.pid)), which holds the name"
            case .ended(let ended): "its process (pid \(ended.pid)) ended, as its launcher saw, and this registration was read after"
            case .admitted, .replaces: ""
            }
            let text = "worker \(name) incarnation \(id) (pid \(registration.pid)) is superseded: \(why). "
                + "It must stop so that it does not serve a stale copy of the machines; stop the other process first "
                + "if this one is meant to run (or, on two hosts, check that their clocks agree)"
            var actions: [CoordinatorAction] = []
            if known.logged.insert(id).inserted {
                actions.append(.warn("dropped the registration of worker \(name) incarnation \(id) (pid \(registration.pid)): "
                    + "\(why); told it to stop"))
                incarnations[name] = known
            }
            actions.append(.toPeer(identity, WireMessage.error(WireError(.superseded, text), correlation: correlation)))
            return actions
        }
    }

    /// The heartbeat for a registered worker: naming its incarnation when it sent one, so a
    /// process replaced under that name learns it (with `ROUTER_HANDOVER` a reconnecting old
    /// process takes the name back for a moment, and hears this).
    func heartbeat(for worker: String) -> WireMessage {
        WireMessage(Header(.heartbeat), address: worker, payload: incarnations[worker]?.heartbeat ?? [])
    }

    /// `instances` from worker number `number`: the keyed instances it hosts, listed at once. An
    /// address the topology does not place on that worker is not listed: the worker is answered
    /// `forbidden` naming them, and the refusal is logged (rate-limited, `+Authority.swift`).
    mutating func noteReported(_ message: WireMessage, from number: Int) -> [CoordinatorAction] {
        let worker = workerNames[number]
        guard let report = try? WireJSON.decode(InstancesReport.self, from: message.payload, code: .malformedFrame) else {
            return [.warn("worker \(worker) sent an instances report that does not decode; is it the same Grove version?")]
        }
        var strays: [String] = []
        var over = 0
        let limits = topology.limits
        for address in report.instances {
            // As a client's address is held: within limits.addressBytes, printable, in NFC.
            let wellFormed = AddressChecks.addressFormProblem(address, limit: limits.addressBytes) == nil
            let parsed = MachineAddress(address)
            // Its own instances being released to it (handoff) are its own already.
            guard wellFormed, let key = parsed.key, !key.isEmpty, let spec = topology.machine(named: parsed.machine), spec.keyed,
                  host(of: spec, key: key) == worker || (!handoff.homesBack.isEmpty && homeBeingReleased(address) == worker) else {
                strays.append(address)
                continue
            }
            // A worker lists no more instances than clients could have started: the same bound.
            guard keyedInstances[spec.name]?.contains(address) == true
                    || (keyedInstances[spec.name]?.count ?? 0) < limits.instancesPerMachine else {
                over += 1
                continue
            }
            keyedInstances.insert(address, of: spec.name)
        }
        var actions: [CoordinatorAction] = []
        if over > 0 {
            actions.append(.warn("worker \(worker) reported \(over) keyed instance(s) past limits.instancesPerMachine "
                + "(\(limits.instancesPerMachine)); not listed (they still run there; raise the limit if this is expected)"))
        }
        guard !strays.isEmpty else { return actions }
        return actions + refuse(message, from: number, "it reported \(strays.count) keyed instance(s) the topology does not place on it "
            + "or that are not well-formed addresses (limits.addressBytes, printable, NFC), not listed: "
            + "\(strays.prefix(5).map(Self.shown).joined(separator: ", "))\(strays.count > 5 ? ", …" : "")")
    }
}
