import Foundation
import GroveCluster
@_spi(GroveInternal) import GroveWire

extension CoordinatorCore {
    /// A message from a worker connection; `identity` is the connection's routing id, which a
    /// registration binds to the worker it names (`+Connections.swift`).
    /// - Parameters:
    ///   - principal: Who the connection's key proved it is (`.trusted` without CURVE).
    ///   - peer: The connection's ZAP user id (`nil` without CURVE): a registration binds it to
    ///     the worker with the routing id, and messages must carry it; also for messages about
    ///     a refusal.
    ///   - frameCount: How many frames the message had after the routing id, those the socket
    ///     dropped unread included (``Inbound/frameCount``); `nil`: `frames.count`.
    mutating func fromWorker(_ identity: [UInt8], _ frames: ArraySlice<[UInt8]>, now: ContinuousClock.Instant,
                             principal: Gatekeeper.Principal? = .trusted, peer: String? = nil, frameCount: Int? = nil) -> [CoordinatorAction] {
        let message: WireMessage
        do {
            message = try WireMessage(frames: frames, received: frameCount ?? frames.count)
        } catch {
            let refusal = WireMessage.error(error, correlation: error.correlation ?? 0)
            guard let connection = connections[identity] else { return [.toPeer(identity, refusal)] }
            return [.toWorker(workerNames[connection.worker], refusal)]
        }
        if message.header.kind == .register { return register(identity, message, now: now, principal: principal, peer: peer) }
        let worker: Int
        switch sender(identity, userID: peer, kind: message.header.kind, now: now) {
        case .worker(let number): worker = number
        case .refused(let actions): return actions
        }
        guard message.header.kind == .batch else { return fromWorker(worker: worker, message) }
        do {
            return try Batch.unpack(message.payload).flatMap { fromWorker(worker: worker, $0) }
        } catch {
            return [.toWorker(workerNames[worker], WireMessage.error(error, correlation: 0))]
        }
    }

    /// The request a worker's reply answers, taken off the pending table; nil when there is none
    /// or it was sent to another worker (only the worker a request went to may answer it).
    mutating func answered(by worker: Int, correlation: UInt64) -> Pending? {
        guard let request = pending.removeValue(forKey: correlation) else { return nil }
        guard request.worker == worker else {
            pending.insert(request, for: correlation)
            return nil
        }
        inFlight[worker] -= 1
        inFlightBytes[worker] -= request.bytes
        return request
    }

    /// What to do with `reply` to `request`: pass it to the client, or note a failed route.
    mutating func deliver(_ reply: WireMessage, to request: Pending) -> [CoordinatorAction] {
        switch request.origin {
        case .client(let client, let clientCorrelation):
            var reply = reply
            reply.header.correlation = clientCorrelation
            return [.toClient(client, reply)]
        case .route(let from):
            guard reply.header.kind == .error else { return [] }
            let error = (try? WireJSON.decode(WireError.self, from: reply.payload))
                ?? WireError(.malformedFrame, "the worker's error reply could not be decoded")
            return routeFailed(from: from, to: request.address, error)
        }
    }

    /// One message from registered worker number `worker` (on its own, or out of a batch),
    /// parsed: the general path's way into ``decide(worker:_:)``.
    mutating func fromWorker(worker: Int, _ message: WireMessage) -> [CoordinatorAction] {
        switch MessageView.with(message, { decide(worker: worker, $0) }) {
        case .reply(let client, let correlation):
            var reply = message
            reply.header.correlation = correlation
            return [.toClient(client, reply)]
        case .act(let actions):
            return actions
        }
    }

    /// The one place that decides what becomes of a message from registered worker number
    /// `worker`, lone or batched: a reply passed on to the client that asked, a state change or
    /// an ending published, an output routed, io call bookkeeping, or a refusal. Each kind is
    /// checked first as the table of message kinds asks (``MessageKind/authority``,
    /// `+Authority.swift`): a worker speaks only for what it hosts.
    mutating func decide(worker: Int, _ message: MessageView) -> WorkerDecision {
        let name = workerNames[worker]
        let correlation = message.correlation
        func refuse(_ error: WireError) -> WorkerDecision {
            .act([.toWorker(name, WireMessage.error(error, correlation: correlation))])
        }
        func refuseKind(_ why: String) -> WorkerDecision {
            refuse(WireError(.unknownKind, "workers may not send \(message.kind.name) messages: \(why)"))
        }
        if let problem = message.traceProblem { return refuse(problem) }
        // The rules below that read more than the header.
        func parsed(_ rule: (WireMessage) -> [CoordinatorAction]) -> WorkerDecision {
            do {
                return .act(rule(try message.message()))
            } catch {
                return refuse(error)
            }
        }
        // Those whose sender must host the address or run the call: refused unless it does.
        func checked(_ rule: (WireMessage) -> [CoordinatorAction]) -> WorkerDecision {
            parsed { message in refusal(of: message, from: worker) ?? rule(message) }
        }
        switch message.kind {
        case .heartbeat:
            // Empty, unless the welcome asked for metrics: then what the worker counted. A
            // report nobody asked for (metrics off) is not copied or decoded.
            guard message.payloadCount > 0, topology.metrics.listen != nil else { return .act([]) }
            return .act([.workerMetrics(worker: name, report: Array(message.payloadBytes))])
        case .state, .accepted, .error, .deadLetterList:
            guard let request = answered(by: worker, correlation: correlation) else { return .act([]) }
            noteReply(from: worker, size: message.addressBytes.count + message.payloadCount)
            if case .client(let client, let clientCorrelation) = request.origin {
                counts.replies += 1
                return .reply(client: client, correlation: clientCorrelation)
            }
            return parsed { deliver($0, to: request) }
        case .stateChanged:
            return checked { [.publish(topic: "state:" + $0.address, $0)] }
        case .effect:
            return checked { [.publish(topic: "effect:" + $0.address, $0)] }
        case .machine:
            return checked { ended($0) }
        case .output:
            return checked { route(output: $0, from: worker) }
        case .ioRequest:
            // `sender(_:userID:kind:now:)` noted this very message's arrival before it came here.
            return checked { startCall(from: name, $0, now: workers[name]?.lastHeard ?? .now) }
        case .ioResult:
            return checked { finishCall(correlation, $0, from: name) }
        case .ioCancel:
            return checked { cancelCall(from: name, originID: correlation, reason: $0.payload) }
        case .ioCancelled:
            return checked { cancelAnswered(correlation, $0, by: name) }
        case .instances:
            return checked { noteReported($0, from: worker) }
        case .release:
            // Only what the coordinator asked this very worker to release is taken from it.
            return parsed { released($0, by: worker) }
        case .register:
            return refuseKind("a registration comes on its own, not in a batch")
        case .batch:
            return refuseKind("batches do not nest")
        case .worker, .event, .get, .cancel, .stop, .restart, .list, .echo, .deadLetters, .snapshot, .poison, .locate, .listing,
             .welcome, .observe, .states, .poisonList, .location, .quarantine, .returned, .access, .placement:
            // Why, from the table of message kinds.
            return refuse(WireError(.unknownKind, message.kind.refusalForWorkers ?? "workers may not send \(message.kind.name) messages"))
        }
    }

    /// A registration on connection `identity`: the worker it names is the message's address
    /// (the routing id's text when that is empty, as older workers' routing ids were their names).
    /// Every refusal goes to that connection only; once admitted, the connection is the
    /// worker's (`+Connections.swift`), and a process registered before under the name is lost.
    mutating func register(_ identity: [UInt8], _ message: WireMessage, now: ContinuousClock.Instant,
                           principal: Gatekeeper.Principal? = .trusted, peer: String? = nil) -> [CoordinatorAction] {
        let name = message.address.isEmpty ? String(decoding: identity, as: UTF8.self) : message.address
        func reject(_ text: String) -> [CoordinatorAction] {
            [.toPeer(identity, WireMessage.error(WireError(.registrationRejected, text), correlation: message.header.correlation))]
        }
        guard let slot = workers[name] else {
            let known = topology.workerInstances.map(\.name).joined(separator: ", ")
            return reject("worker name '\(name)' is not in topology '\(topology.name)'; known workers: \(known)")
        }
        if let refusal = Self.registrationForbidden(name, group: slot.group, principal: principal, peer: peer) {
            // Answered on the connection it came from only: the registered worker keeps the name.
            return [.warn(refusal), .toPeer(identity, WireMessage.error(WireError(.forbidden, refusal), correlation: message.header.correlation))]
        }
        if let registered = connections[identity], workerNames[registered.worker] != name {
            // One connection speaks for one worker: as two, it could answer for both.
            return reject("this connection is registered as worker \(workerNames[registered.worker]) already; "
                + "each worker instance connects on a connection of its own")
        }
        guard let registration = try? WireJSON.decode(Registration.self, from: message.payload, code: .malformedFrame) else {
            return reject("the registration payload could not be decoded; is the worker built from the same Grove version?")
        }
        let hosted = topology.machines.filter { $0.worker == slot.group }
        var problems: [String] = []
        // Each problem names where the topology asks for it ($.machines[2].type), as the
        // topology's own errors do.
        func places(_ indices: some Sequence<Int>, _ section: String, _ key: String) -> String {
            indices.map { "$.\(section)[\($0)].\(key)" }.joined(separator: ", ")
        }
        for type in Set(hosted.map(\.type)).subtracting(registration.machineTypes).sorted() {
            let guess = TopologyDecoder.closest(to: type, among: registration.machineTypes).map { " (did you mean '\($0)'?)" } ?? ""
            let indices = topology.machines.indices.filter { topology.machines[$0].worker == slot.group && topology.machines[$0].type == type }
            problems.append("machine type '\(type)'\(guess) is not registered: register it in the worker's WorkerConfiguration "
                + "or fix \(places(indices, "machines", "type"))")
        }
        let served = topology.io.filter { $0.worker == slot.group }.map(\.request)
        for request in Set(served).subtracting(registration.ioHandlers).sorted() {
            let guess = TopologyDecoder.closest(to: request, among: registration.ioHandlers).map { " (did you mean '\($0)'?)" } ?? ""
            let indices = topology.io.indices.filter { topology.io[$0].worker == slot.group && topology.io[$0].request == request }
            problems.append("io request '\(request)'\(guess) has no handler: register one with configuration.io.register, "
                + "or fix \(places(indices, "io", "request")) (or \(places(indices, "io", "worker")) to serve it elsewhere)")
        }
        guard problems.isEmpty else {
            return reject("worker \(name) (group '\(slot.group)' of topology '\(topology.name)') cannot serve what the topology places on it: "
                + problems.joined(separator: "; ") + ". It offers machine types [\(registration.machineTypes.joined(separator: ", "))] "
                + "and io handlers [\(registration.ioHandlers.joined(separator: ", "))]")
        }
        if let refusal = admitIncarnation(name, registration, on: identity, correlation: message.header.correlation, now: now) {
            return refusal
        }
        var actions: [CoordinatorAction] = []
        if slot.registered {
            if let pid = slot.pid, pid != registration.pid, let heard = slot.lastHeard,
               now - heard < .milliseconds(topology.heartbeat.timeoutMs) {
                let outcome = registration.incarnation == nil
                    ? "two processes share the name and will displace each other"
                    : "the newer process keeps the name and the older one is told to stop"
                actions.append(.warn("worker name \(name) was claimed by pid \(registration.pid) while pid \(pid) was still registered and alive; "
                    + "\(outcome). Give each worker its own --name"))
            }
            actions += lose(name, reason: "it registered again (restarted)", cause: .registeredAgain)
        }
        // Before the welcome, and before this process can be sent anything: what it carries
        // from its predecessor's crash may quarantine a pattern it must refuse from the start.
        actions += attributeCrash(registration, of: name, now: now)
        workers[name]?.registered = true
        registeredNumbers[number(of: name)] = true
        registrations += 1
        workers[name]?.pid = registration.pid
        workers[name]?.lastHeard = now
        workers[name]?.direct = registration.direct
        // Under CURVE the worker's key, as ZAP gave it (its User-Id starts with the key in Z85).
        if case .worker? = principal, let peer { workers[name]?.serverKey = String(peer.prefix(40)) } else { workers[name]?.serverKey = nil }
        workers[name]?.incarnation = registration.incarnation
        connect(identity, worker: number(of: name), userID: peer)
        let remote = topology.io.filter { $0.worker != slot.group }.map(\.request)
        // Single machines go to one instance of a pool; keyed ones to every instance (by key).
        let placedHere = hosted.filter { $0.keyed || topology.placement(ofMachine: $0.name, key: nil) == name }
        let namesHere = Set(placedHere.map(\.name))
        let routeEvents = topology.routes.enumerated().compactMap { index, route -> Welcome.RouteEvent? in
            guard let event = route.event, namesHere.contains(route.targetMachine) else { return nil }
            return Welcome.RouteEvent(machine: route.targetMachine, event: event, path: "$.routes[\(index)].event")
        }
        let durable = placedHere.contains { $0.durability != .none }
        // Placed on this worker's own group: run by its own handlers, under their own timeouts.
        let localTimeouts = Dictionary(topology.io.filter { $0.worker == slot.group }.compactMap { placement in
            placement.timeoutMs.map { (placement.request, $0) }
        }, uniquingKeysWith: { first, _ in first })
        var welcome = Welcome(
            machines: placedHere.map {
                Welcome.HostedMachine(name: $0.name, type: $0.type, keyed: $0.keyed,
                                      durability: $0.durability == .none ? nil : $0.durability,
                                      onEnd: $0.onEnd == .stay ? nil : $0.onEnd,
                                      // Absent for the defaults: the welcome of a coordinator that predates it.
                                      restart: $0.onEnd == .restart && $0.restart != RestartPolicy() ? $0.restart : nil,
                                      passivateAfterMs: $0.passivateAfterMs, handoff: topology.handsOff($0) ? true : nil)
            },
            remoteIO: remote, heartbeatIntervalMs: topology.heartbeat.intervalMs,
            heartbeatTimeoutMs: topology.heartbeat.timeoutMs, mailboxCapacity: topology.queues.mailboxCapacity,
            routeEvents: routeEvents,
            snapshotEvery: durable ? topology.durability.snapshotEvery : nil,
            flush: durable ? topology.durability.flush : nil,
            epoch: epoch.value == 0 ? nil : epoch.value, incarnation: registration.incarnation,
            audit: topology.auditPlacement(of: placedHere),
            ioTimeoutMs: topology.ioLimits.timeoutMs, localIOTimeoutsMs: localTimeouts.isEmpty ? nil : localTimeouts,
            messageBytes: topology.limits.messageBytes)
        let quarantined = quarantinedPatterns(forGroup: slot.group)
        if !quarantined.isEmpty { welcome.quarantined = quarantined }
        if topology.metrics.listen != nil { welcome.metrics = true }
        welcome.batchEnvelopes = topology.limits.batchEnvelopes
        if durable, let postgres = topology.durability.postgres {
            welcome.store = SharedStore(postgres: postgres.url, topology: topology.name)
        }
        welcome.direct = directSettings(forGroup: slot.group, registered: registration.direct)
        if let payload = try? WireJSON.encode(welcome) {
            actions.append(.toWorker(name, WireMessage(Header(.welcome, correlation: message.header.correlation), address: name, payload: payload)))
        }
        // A worker serving direct routes judges clients with the table from its first message on.
        if welcome.direct != nil { actions += pushAccess(to: name) }
        actions.append(observe(for: name))
        actions.append(publishWorker(WorkerEvent(worker: name, phase: .registered, machines: machines(on: name))))
        // The placement before the releases: a worker reads that its adopted instances are going
        // home before it lets go of them, so no direct request between the two brings one back.
        let releases = handoffRegistered(name)
        actions += pushPlacement(fresh: name)
        return actions + releases
    }

    func observe(for worker: String) -> CoordinatorAction {
        let payload = (try? WireJSON.encode(Observation(prefixes: subscriptions.sorted()))) ?? []
        return .toWorker(worker, WireMessage(Header(.observe), payload: payload))
    }

    /// Heartbeats to workers, loss of the silent ones, io calls past their deadlines, and the
    /// counts of refused worker messages not logged yet.
    mutating func tick(now: ContinuousClock.Instant) -> [CoordinatorAction] {
        var actions = expireCalls(now: now)
        actions += logRefusals(now: now)
        let interval = Duration.milliseconds(topology.heartbeat.intervalMs)
        if lastHeartbeat.map({ now - $0 >= interval }) ?? true {
            lastHeartbeat = now
            for slot in workers.values where slot.registered {
                actions.append(.toWorker(slot.name, heartbeat(for: slot.name)))
            }
        }
        let timeout = Duration.milliseconds(topology.heartbeat.timeoutMs)
        if let lastTick, now - lastTick > timeout {
            // What the workers sent meanwhile waits unread: this coordinator's pause is not
            // their silence. Killed for it, every worker would lose its `none` machines.
            let registered = workers.keys.filter { workers[$0]?.registered == true }
            for name in registered { workers[name]?.lastHeard = now }
            if !registered.isEmpty {
                actions.append(.warn("the coordinator did not run for \((now - lastTick).wholeMilliseconds) ms (stopped, starved of CPU, or busy with one long turn of work); "
                                     + "its workers get a full heartbeat timeout from now to be heard from again"))
            }
        }
        lastTick = now
        for slot in workers.values where slot.registered {
            if let heard = slot.lastHeard, now - heard > timeout {
                actions += lose(slot.name, reason: "no heartbeat for \(topology.heartbeat.timeoutMs) ms", cause: .silent)
            }
        }
        actions += handoffTick(now: now)
        actions += pushPlacement()
        return actions
    }

    /// Declares a worker lost: its pending requests fail, io calls it ran return to their
    /// machines as `worker-lost` failures (their places, and those of calls cancelled there,
    /// are free), calls its machines started are cancelled where they run, its
    /// machines are reported unavailable and its keyed instances no longer listed. Everything
    /// else keeps working.
    mutating func lose(_ name: String, reason: String, cause: WorkerLoss) -> [CoordinatorAction] {
        guard workers[name]?.registered == true else { return [] }
        workers[name]?.registered = false
        registeredNumbers[number(of: name)] = false
        registrations += 1
        let returned = handoffLost(name)
        let pid = workers[name]?.pid
        workers[name]?.pid = nil
        var actions: [CoordinatorAction] = [.lost(worker: name, cause: cause, pid: pid)] + returned
        let number = number(of: name)
        actions += disconnect(number)
        inFlight[number] = 0
        inFlightBytes[number] = 0
        if let pid { containment.lostPIDs[number] = pid }
        // In id order, which is the order the requests were sent: their replies keep it.
        for (id, request) in pending.removeAll(sentTo: number) {
            guard case .client(let client, let correlation) = request.origin else { continue }
            // Who sent it, should the worker's next process report that it died running it.
            if request.sender != 0 {
                containment.noteLost(id, sender: request.sender, address: request.address, eventCase: request.eventCase, worker: number)
            }
            let error = WireError(.workerLost, "worker \(name) was lost (\(reason)) before answering; the event may not have been processed",
                                  address: request.address)
            actions.append(.toClient(client, WireMessage.error(error, correlation: correlation)))
        }
        for (id, call) in calls where call.target == name {
            forget(id)
            let payload = IOCallResult.payload(failing: "worker-lost", "worker \(name) running '\(call.request)' was lost (\(reason))")
            actions.append(.toWorker(call.origin, WireMessage(Header(.ioResult, correlation: call.originID), address: call.address, payload: payload)))
            actions.append(publishEffect(call, .lost, reason: "worker \(name) lost: \(reason)"))
        }
        actions += cancelsLost(with: name, reason: reason)
        // In id order. Their tasks keep their places until their workers say they ended.
        for (id, call) in calls.filter({ $0.value.origin == name }).sorted(by: { $0.key < $1.key }) {
            let why = "the machine's worker \(name) was lost: \(reason)"
            actions += cancel(id, reason: why, publishing: nil)
            actions.append(publishEffect(call, .lost, reason: why))
        }
        let machines = machines(on: name)
        publications.forgetStates(of: machines)
        // Its keyed instances went with it: a worker that registers again starts without any
        // (each starts with its next event), so they are no longer listed.
        for address in machines {
            let parsed = MachineAddress(address)
            if parsed.isInstance { keyedInstances.remove(address, of: parsed.machine) }
        }
        actions.append(.warn("worker \(name) lost (\(reason)); its machines are unavailable until it registers again"))
        actions.append(publishWorker(WorkerEvent(worker: name, phase: .lost, reason: reason, machines: machines)))
        return actions + pushPlacement()
    }

    /// The addresses a worker instance hosts: its single machines and the keyed instances placed
    /// on it so far.
    func machines(on worker: String) -> [String] {
        var addresses: [String] = []
        for spec in topology.machines {
            if spec.keyed {
                addresses += (keyedInstances[spec.name]?.filter { address in
                    let key = String(address.dropFirst(spec.name.count + 1))
                    return host(of: spec, key: key) == worker
                } ?? []).sorted()
            } else if topology.placement(ofMachine: spec.name, key: nil) == worker {
                addresses.append(spec.name)
            }
        }
        return addresses
    }

    func publishWorker(_ event: WorkerEvent) -> CoordinatorAction {
        .publish(topic: "worker:" + event.worker,
                 WireMessage(Header(.worker), address: event.worker, payload: (try? WireJSON.encode(event)) ?? []))
    }

    func publishEffect(_ call: Call, _ phase: EffectEvent.Phase, reason: String? = nil,
                       task: IOCancelAnswer? = nil) -> CoordinatorAction {
        let event = EffectEvent(address: call.address, effect: call.effect, request: call.request, worker: call.target,
                                phase: phase, reason: reason, task: task?.task, taskEndedAtNs: task?.endedAtNs)
        return .publish(topic: "effect:" + call.address,
                        WireMessage(Header(.effect), address: call.address, payload: (try? WireJSON.encode(event)) ?? []))
    }
}

/// Why the coordinator declared a worker lost.
package enum WorkerLoss: Sendable, Equatable, CustomStringConvertible {
    /// Nothing heard from it within the heartbeat timeout: hung, stopped, or cut off.
    case silent
    /// A send to it failed: its connection is gone.
    case unreachable
    /// It registered again: a new process under the same name, or the same one coming back.
    case registeredAgain
    /// Its process ended, as the launcher that started it saw.
    case exited

    package var description: String {
        switch self {
        case .silent: "no heartbeat within the timeout"
        case .unreachable: "its connection is gone"
        case .registeredAgain: "it registered again"
        case .exited: "its process ended"
        }
    }
}
