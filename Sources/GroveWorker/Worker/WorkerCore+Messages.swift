import Grove
import GroveCluster
@_spi(GroveInternal) import GroveWire

extension WorkerCore {
    /// A `welcome`: the session is up, at the welcome's heartbeat settings. After a
    /// re-registration the machines still placed here with the same type are kept.
    mutating func welcome(_ payload: [UInt8], now: ContinuousClock.Instant) -> [WorkerAction] {
        guard let welcome = try? WireJSON.decode(Welcome.self, from: payload, code: .malformedFrame) else {
            return [.log(.error, "the coordinator's welcome could not be decoded; is it the same Grove version?")]
        }
        if let other = welcome.incarnation, other != incarnation.id {
            // The welcome of an earlier process under this name (its registration reached the
            // coordinator late, after this process took the name's connection): not this one's.
            return [.log(.notice, "ignored a welcome for incarnation \(other) of worker \(worker), not this process (\(incarnation)); "
                + "waiting for the answer to this process's own registration")]
        }
        let again = lastWelcome != nil
        let dropping = machinesToDrop(for: welcome)
        forgetEndings(of: dropping)
        interval = .milliseconds(max(1, welcome.heartbeatIntervalMs))
        timeout = .milliseconds(max(1, welcome.heartbeatTimeoutMs))
        session = .welcomed
        // The coordinator has attributed the last process's crash: later registrations (after
        // a silence) are this process's own.
        crashReport = nil
        lastHeard = now
        lastHeartbeat = nil
        waitingSince = nil
        toldAt = nil
        placed = Dictionary(welcome.machines.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        lastWelcome = welcome
        passivation.adopt(welcome.machines, now: now)
        remoteIO = Set(welcome.remoteIO)
        ioTimeoutMs = welcome.ioTimeoutMs ?? Topology.IOLimits().timeoutMs
        localIOTimeoutsMs = welcome.localIOTimeoutsMs ?? [:]
        messageBytes = welcome.messageBytes ?? Topology.Limits().messageBytes
        batchEnvelopes = welcome.batchEnvelopes ?? Topology.Limits().batchEnvelopes
        var actions: [WorkerAction] = [.openOutflow, .adopt(welcome, dropping: dropping), .reportInstances]
        if let restarted = noteEpoch(welcome) { actions.append(restarted) }
        // Paused or cut off long enough, this worker's keyed instances may have been adopted.
        if again, welcome.machines.contains(where: { $0.handoff == true && $0.keyed }) { actions.append(.checkOwnership) }
        if again {
            let kept = welcome.machines.map(\.name).filter { !dropping.contains($0) }.sorted()
            actions.append(.log(.notice, "registered again with the coordinator at \(coordinator); kept machines \(kept)"
                + (dropping.isEmpty ? "" : ", dropped \(dropping.sorted()) (no longer placed here as before)")))
        } else {
            actions.append(.log(.info, "registered; machines \(welcome.machines.map(\.name))"))
        }
        return actions
    }

    /// The machines of the previous welcome whose instances must go: those no longer placed
    /// here, or placed with another type or keying. Every one of them when the io placement or
    /// the mailbox capacity changed, which running instances cannot follow.
    func machinesToDrop(for welcome: Welcome) -> Set<String> {
        guard let lastWelcome else { return [] }
        if Set(lastWelcome.remoteIO) != Set(welcome.remoteIO) || lastWelcome.mailboxCapacity != welcome.mailboxCapacity {
            return Set(placed.keys)
        }
        return Set(placed.filter { name, machine in
            guard let now = welcome.machines.first(where: { $0.name == name }) else { return true }
            return now.type != machine.type || now.keyed != machine.keyed
        }.keys)
    }

    /// An `error` from the coordinator (not a reply the worker forwards): `unavailable` means it
    /// no longer knows this worker (it restarted, or declared the worker lost), so register
    /// again, once; `registration-rejected` ends the process, and so does `superseded` when it
    /// answers this process's own registration (`correlation`, ``registrationCorrelation``).
    mutating func coordinatorError(_ payload: [UInt8], correlation: UInt64 = 0, now: ContinuousClock.Instant) -> [WorkerAction] {
        guard let error = try? WireJSON.decode(WireError.self, from: payload) else {
            return [.log(.warning, "an error message from the coordinator could not be decoded; is it the same Grove version?")]
        }
        switch error.code {
        case .unavailable:
            // Registering already (or about to reconnect): the registration in flight answers it.
            guard session == .welcomed else { return [] }
            session = .registering(attempt: 0, since: now)
            waitingSince = now
            toldAt = nil
            return [
                .log(.info, "the coordinator asks this worker to register again"),
                .closeOutflow,
                // It forgot the calls this worker's machines started with the worker.
                failingCalls(IOCallResult.Failure(code: IOFailure.Code.coordinatorLost.rawValue,
                    message: "the coordinator at \(coordinator) no longer knows this worker (it restarted or declared it lost); "
                        + "the call's result cannot arrive. Retry once the worker is registered again")),
                .register,
            ]
        case .superseded:
            guard correlation == registrationCorrelation else {
                // The refusal of another process's registration under this name (an earlier
                // one, reaped already, whose registration the coordinator read late), which
                // reached the connection that holds the name now: not about this process.
                return [.log(.notice, "ignored a refusal of another process's registration under this name: \(error.message)")]
            }
            // The coordinator's message names both incarnations and says why.
            return [.exit(.rejected("the coordinator refused this process: \(error.message)"))]
        case .registrationRejected:
            // Retrying cannot help: the topology or this worker's configuration must change.
            return [.exit(.rejected("the coordinator rejected this worker: \(error.message)"))]
        default:
            return [.log(.warning, "the coordinator refused a message from this worker (\(error.code.rawValue)): \(error.message)")]
        }
    }

    /// Why a worker refuses a message of `kind` from the coordinator; `nil` for the kinds it
    /// accepts. The coordinator sends only those; anything else is a bug or a stranger.
    static func refusal(of kind: MessageKind) -> WireError? {
        let why: String
        switch kind {
        case .event, .get, .cancel, .stop, .restart, .echo, .deadLetters, .welcome, .heartbeat, .observe, .quarantine, .release, .returned,
             .access, .placement,
             .ioRequest, .ioResult, .ioCancel, .error:
            return nil
        case .instances:
            why = "instances goes from a worker to the coordinator"
        case .ioCancelled:
            why = "io-cancelled goes from the worker running an io call to the coordinator"
        case .batch:
            why = "batches do not nest: a batch's envelopes are handled one by one"
        case .list:
            why = "list is answered by the coordinator, which knows the whole topology"
        case .snapshot:
            why = "snapshot is answered by the coordinator, which keeps what it published"
        case .poison:
            why = "poison is answered by the coordinator, which keeps the suspensions and the quarantined patterns"
        case .locate:
            why = "locate is answered by the coordinator, which is the directory of where machines live"
        case .state, .accepted, .listing, .deadLetterList, .states, .poisonList, .location:
            why = "\(kind.name) is a reply to a client; a worker sends such replies and never asked for one"
        case .register:
            why = "register goes from a worker to the coordinator"
        case .stateChanged, .effect, .worker, .output, .machine:
            why = "\(kind.name) goes to the coordinator or its watchers (the events socket), never to a worker"
        }
        return WireError(.unknownKind, "a worker does not accept \(kind.name) messages: \(why)")
    }
}
