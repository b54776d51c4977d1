import GroveCluster
@_spi(GroveInternal) import GroveWire

/// What the coordinator keeps to contain input that crashes workers: the ``CrashLedger``, and
/// what it needs to attribute a crash to the client that caused it. A worker records the event
/// each machine runs, with the id of the request that carried it; when the worker dies, the
/// coordinator answers its pending requests `worker-lost` and keeps, for each one a client key
/// sent, that key; the worker's next process reports the event its predecessor died running
/// (its registration's ``CrashReport``), and the id finds the key.
struct Containment {
    struct Lost {
        let sender: UInt32
        let address: String
        /// The event's case as the coordinator read it in the request (``RequestCase``).
        let eventCase: String?
    }

    var ledger: CrashLedger
    /// Client keys (Z85) that sent requests, numbered from 1 in the order first seen, so that
    /// a pending request keeps a number rather than a key. Bounded by the topology's client
    /// keys: only admitted keys get here.
    private(set) var senders: [String] = [""]
    private var senderNumbers: [Substring: UInt32] = [:]
    /// The requests of a client key answered `worker-lost`, by worker number, then id: since
    /// the worker last registered, at most ``lostKept`` per worker.
    var lost: [Int: [UInt64: Lost]] = [:]
    /// The process each worker had registered when it was last lost, by worker number.
    var lostPIDs: [Int: Int32] = [:]
    /// Whether the last exit of each worker's process (as `fsm-launch` saw it) may be blamed on
    /// the event it was running: false for a kill from outside, which lands in an innocent
    /// event. Absent for a worker nobody reported (external workers): blamed.
    var exits: [String: Bool] = [:]
    /// The incarnation whose crash report was counted last, by worker: a registration sent
    /// again (a retry before the welcome) is counted once.
    var reported: [String: UInt64] = [:]
    /// Workers whose last process fsm-launch saw exit (`noteExit`), until a crash report of
    /// theirs is counted: the evidence, besides the worker's word, that a process died.
    var sawExit: Set<String> = []

    static let lostKept = 1 << 16

    init(settings: Topology.PoisonSettings) {
        ledger = CrashLedger(settings: settings)
    }

    /// Whether any key is suspended: the hot path reads only this.
    var hasSuspensions: Bool { !ledger.suspended.isEmpty }

    /// The number of the client key a message's ZAP user id starts with (its Z85 public key,
    /// then a space and the peer's address); 0 for none.
    mutating func number(ofSender userID: String) -> UInt32 {
        let key = userID.prefix(40)
        guard key.count == 40 else { return 0 }
        if let known = senderNumbers[key] { return known }
        let number = UInt32(senders.count)
        senders.append(String(key))
        senderNumbers[key] = number
        return number
    }

    /// The key numbered `number`; nil for 0 or an unknown number.
    func key(of number: UInt32) -> String? {
        number > 0 && Int(number) < senders.count ? senders[Int(number)] : nil
    }

    mutating func noteLost(_ id: UInt64, sender: UInt32, address: String, eventCase: String?, worker: Int) {
        if lost[worker, default: [:]].count >= Self.lostKept { lost[worker] = [:] }
        lost[worker, default: [:]][id] = Lost(sender: sender, address: address, eventCase: eventCase)
    }

    /// The refusal of an event or echo from key `sender`, when it is suspended.
    func suspension(of sender: UInt32, address: String) -> WireError? {
        guard let key = key(of: sender), let suspension = ledger.suspended[key] else { return nil }
        return ClientAccess.suspended(key: key, crashes: suspension.crashes, patterns: suspension.patterns.map(\.description),
                                      address: address)
    }
}

extension CoordinatorCore {
    /// A worker process reported, with its registration, what its predecessor under `name` died
    /// running: counted against the event's pattern and its sender (``CrashLedger``), unless
    /// `fsm-launch` saw that process killed from outside. A pattern that reaches its threshold
    /// is quarantined for every address (pushed to every registered worker hosting its type;
    /// this one gets it in its welcome), a key is suspended, and the crashes that led there are
    /// forgiven: the supervisor no longer counts them toward the group's intensity.
    mutating func attributeCrash(_ registration: Registration, of name: String, now: ContinuousClock.Instant) -> [CoordinatorAction] {
        let number = number(of: name)
        let lost = containment.lost.removeValue(forKey: number) ?? [:]
        let pid = containment.lostPIDs.removeValue(forKey: number)
        let exit = containment.exits.removeValue(forKey: name)
        let blamed = exit ?? true
        if exit != nil { containment.sawExit.insert(name) } else { containment.sawExit.remove(name) }
        guard let report = registration.crash else { return [] }
        if let incarnation = registration.incarnation {
            guard containment.reported[name] != incarnation else { return [] }
            containment.reported[name] = incarnation
        }
        // Checked as a client's address is, before anything of the report is kept or logged.
        if let problem = AddressChecks.addressFormProblem(report.address, limit: topology.limits.addressBytes) {
            return [.warn("worker \(name) reported a crash at \(Self.shown(report.address)), not a well-formed address (\(problem)); not counted")]
        }
        // The rest is the worker's text too: escaped where it could hold a line break.
        func plain(_ text: String) -> String { AddressChecks.controlCharacter(in: text) == nil ? text : Self.shown(text) }
        func described(_ pattern: PoisonPattern?) -> String {
            "a \(plain(report.origin)) event of \(report.address)" + (pattern.map { " (\(plain($0.description)))" } ?? " (its case unknown)")
        }
        guard blamed else {
            return [.warn("worker \(name)'s last process was killed from outside while it ran \(described(report.pattern)); not counted against the event")]
        }
        // The report is the worker's word: it is counted only for a machine the topology places
        // on that worker, of the type it names, and only when something besides the worker saw
        // the process die (fsm-launch's exit, or a request of a client lost with it at that
        // address). A worker key cannot quarantine another group's patterns, nor make up crashes.
        let parsed = MachineAddress(report.address)
        let spec = topology.machine(named: parsed.machine)
        guard let spec, host(of: spec, key: parsed.key?.isEmpty == false ? parsed.key : nil) == name,
              report.type == nil || report.type == spec.type else {
            return [.warn("worker \(name) reported a crash in \(Self.shown(report.address))"
                + (report.type.map { " (\(plain($0)))" } ?? "") + ", which the topology does not place on it; not counted")]
        }
        var sender: String?
        var pattern = report.pattern
        var actions: [CoordinatorAction] = []
        if report.origin == "sent", let correlation = report.correlation, let request = lost[correlation], request.address == report.address {
            sender = containment.key(of: request.sender)
            // The lost request is the coordinator's record, and so is its case: the one the
            // client sent, read as the coordinator forwarded it. The worker's report counts for
            // that pattern only when it names that case. A report naming another (a worker key
            // that claims a lost request to quarantine a case of its choosing) is counted as
            // the coordinator saw it: the crash and the sender stand (the loss witnesses them),
            // and no pattern, rather than the case the coordinator read: for a type with a
            // Codable of its own, the key a client wrote need not be the case the worker
            // refuses events by, and a pattern that matches nothing would forgive crashes it
            // cannot prevent. `==` as the decoder compares keys (canonical equivalence).
            if let claimed = report.event, claimed != request.eventCase {
                pattern = nil
                actions.append(.warn("worker \(name) reported case \(Self.shown(claimed)) for the request it lost at \(Self.shown(report.address)), "
                    + (request.eventCase.map { "which carried case \(Self.shown($0))" } ?? "whose case the coordinator could not read")
                    + "; counted without a pattern"))
            } else {
                // Its spelling is the coordinator's.
                pattern = report.event == nil ? nil : request.eventCase.map { PoisonPattern(type: spec.type, event: $0) }
            }
        } else if report.origin == "sent", let correlation = report.correlation, DirectRequestID.isDirect(correlation) {
            // A direct request: the coordinator never saw it, so only the exit fsm-launch saw
            // witnesses the crash, and the sender is the worker's word (the number its id
            // carries). Counted against that key only when the key may send there: a worker
            // key can then blame only a key that could have sent the event.
            guard containment.sawExit.remove(name) != nil else {
                return [.warn("worker \(name) reported a crash while it ran \(described(pattern)) from its direct route, but fsm-launch "
                    + "did not see its process exit; not counted")]
            }
            sender = directSender(of: correlation, address: report.address)
        } else if containment.sawExit.remove(name) == nil {
            return [.warn("worker \(name) reported a crash while it ran \(described(pattern)), but neither fsm-launch saw its process exit nor was a "
                + "request at that address lost with it; not counted")]
        }
        let what = described(pattern)
        let crash = CrashLedger.Crash(worker: name, pid: pid, at: now, address: report.address, pattern: pattern, sender: sender)
        let verdict = containment.ledger.count(crash)
        let settings = topology.poison
        var counts: [String] = []
        if let pattern {
            counts.append("crash \(verdict.patternCrashes) of \(pattern)" + (settings.quarantineAfter > 0 ? " (\(settings.quarantineAfter) quarantine it)" : ""))
        }
        if let sender {
            counts.append("crash \(verdict.senderCrashes) of client key \(sender)" + (settings.suspendAfter > 0 ? " (\(settings.suspendAfter) suspend it)" : ""))
        } else {
            counts.append("its sender is not known (a client without a key, a route, or an event that was queued before it ran)")
        }
        actions.append(.warn("worker \(name)'s last process died while it ran \(what): \(counts.joined(separator: "; "))"))
        if let quarantined = verdict.quarantined {
            self.counts.quarantines += 1
            actions.append(.warn("quarantined \(quarantined) for every address after \(verdict.patternCrashes) worker crashes within "
                + "\(settings.periodMs) ms: clients' \(quarantined.type) events of case '\(quarantined.event)' are refused until an admin "
                + "releases it (fsm-send quarantines release \(quarantined.type) \(quarantined.event))"))
            actions += pushPatterns(ofType: quarantined.type, except: name)
        }
        if let suspended = verdict.suspended {
            actions.append(.warn("suspended client key \(suspended) after \(verdict.senderCrashes) worker crashes attributed to its events "
                + "within \(settings.periodMs) ms: its events are refused (forbidden) until an admin lifts it (fsm-send suspensions lift '\(suspended)')"))
            actions += pushAccess()
        }
        for forgiven in verdict.forgiven {
            guard let pid = forgiven.pid else { continue }
            let cause = verdict.quarantined.map { "\($0), now quarantined" } ?? verdict.suspended.map { "client key \($0), now suspended" } ?? ""
            actions.append(.forgive(worker: forgiven.worker, pid: pid, reason: "its crash was caused by \(cause)"))
        }
        return actions
    }

    /// The client key a direct request's `id` names (``DirectRequestID``), when that key may
    /// send events to `address`: the one a crash on the direct route is counted against.
    func directSender(of id: UInt64, address: String) -> String? {
        guard let number = DirectRequestID.sender(of: id), let key = containment.key(of: number),
              let grants = clientGrants[key] else { return nil }
        return ClientAccess.forbidden(.event, address: address, for: .client(grants)) == nil ? key : nil
    }

    /// The exit of worker `name`'s process `pid`, as its launcher saw it: `blamesEvent` false
    /// for a kill from outside, whose crash report is then not counted. The process's
    /// incarnation is retired (``Incarnations/retire(pid:)``).
    mutating func noteExit(of name: String, pid: Int32, blamesEvent: Bool) {
        guard workers[name] != nil else { return }
        containment.exits[name] = blamesEvent
        incarnations[name]?.retire(pid: pid)
    }

    /// The quarantined patterns of the machine types placed on worker group `group`.
    func quarantinedPatterns(forGroup group: String) -> [PoisonPattern] {
        let types = Set(topology.machines.filter { $0.worker == group }.map(\.type))
        return containment.ledger.patterns.filter { types.contains($0.type) }
    }

    /// `quarantine` to every registered worker that hosts a machine of type `type` (but
    /// `excluded`), with every pattern quarantined for its machine types.
    func pushPatterns(ofType type: String, except excluded: String? = nil) -> [CoordinatorAction] {
        let groups = Set(topology.machines.filter { $0.type == type }.map(\.worker))
        return topology.workerInstances.filter { groups.contains($0.group) && $0.name != excluded && workers[$0.name]?.registered == true }
            .compactMap { instance in
                guard let payload = try? WireJSON.encode(QuarantinedPatterns(patterns: quarantinedPatterns(forGroup: instance.group))) else {
                    return nil
                }
                return .toWorker(instance.name, WireMessage(Header(.quarantine), address: instance.name, payload: payload))
            }
    }

    /// An admin's `poison` request, answered here: the list of suspended keys and quarantined
    /// patterns, or a suspension lifted, or a pattern released (pushed to the workers hosting
    /// its type). Needs the `admin` role over every machine.
    mutating func poison(from identity: [UInt8], _ request: MessageView, as principal: Gatekeeper.Principal?) -> [CoordinatorAction] {
        let correlation = request.correlation
        func refuse(_ error: WireError) -> [CoordinatorAction] { [.toClient(identity, WireMessage.error(error, correlation: correlation))] }
        let accepted = CoordinatorAction.toClient(identity, WireMessage(Header(.accepted, correlation: correlation)))
        if case .trusted? = principal {} else if let refusal = ClientAccess.forbidden(.poison, address: nil, for: principal) {
            return refuse(refusal)
        }
        let parsed: PoisonRequest
        do {
            parsed = try WireJSON.decode(PoisonRequest.self, from: Array(request.payloadBytes), what: "the poison request")
        } catch {
            return refuse(error)
        }
        switch parsed.action {
        case .list:
            var list = containment.ledger.list(now: lastTick ?? .now)
            list.refusedWatchers = watchers.refused.sorted()
            guard let payload = try? WireJSON.encode(list) else { return refuse(WireError(.malformedJSON, "the poison list does not encode")) }
            return [.toClient(identity, WireMessage(Header(.poisonList, correlation: correlation), payload: payload))]
        case .lift:
            guard let key = parsed.key else {
                return refuse(WireError(.malformedJSON, #"a poison lift needs the client's key: {"action":"lift","key":"<40 Z85 characters>"}"#))
            }
            // One key may be both: suspended for its events, refused for its watcher's prefixes.
            let suspension = containment.ledger.lift(key)
            let watcher = watchers.lift(key)
            guard suspension || watcher else {
                return refuse(WireError(.unknownPoison, "client key \(key) is neither suspended nor refused on the events endpoint "
                    + "(lifted already?); list them with `fsm-send suspensions`"))
            }
            let lifted = [suspension ? "the suspension" : nil, watcher ? "the events endpoint's refusal" : nil].compactMap { $0 }
            return [.warn("an admin lifted \(lifted.joined(separator: " and ")) of client key \(key)")]
                + (watcher ? [.admitWatcher(key)] : []) + (suspension ? pushAccess() : []) + [accepted]
        case .release:
            guard let type = parsed.type, let event = parsed.event else {
                return refuse(WireError(.malformedJSON, #"a poison release needs the pattern: {"action":"release","type":"Counter","event":"add"}"#))
            }
            let pattern = PoisonPattern(type: type, event: event)
            guard containment.ledger.release(pattern) else {
                return refuse(WireError(.unknownPoison, "\(pattern) is not quarantined (released already?); list the quarantined patterns with `fsm-send quarantines`"))
            }
            return [.warn("an admin released the quarantined pattern \(pattern)"), accepted] + pushPatterns(ofType: type)
        }
    }
}
