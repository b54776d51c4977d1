import Foundation
import GroveCluster
@_spi(GroveInternal) import GroveWire

extension CoordinatorCore {
    /// An io request from a machine's worker: sent to a registered worker of the group the
    /// topology places the request on (round robin over the pool, skipping instances that run
    /// `ioLimits.concurrentPerWorker` calls already; `busy` when all do). Routed on the
    /// payload's head (``IOCallHead``: the request's name and effect id); the request's bytes are
    /// passed on as they came, never decoded here. The call's deadline (`+CallLimits.swift`)
    /// counts from `now`.
    mutating func startCall(from origin: String, _ message: WireMessage, now: ContinuousClock.Instant) -> [CoordinatorAction] {
        let originID = message.header.correlation
        func fail(_ code: String, _ text: String) -> [CoordinatorAction] {
            [.toWorker(origin, WireMessage(Header(.ioResult, correlation: originID), address: message.address,
                                           payload: IOCallResult.payload(failing: code, text)))]
        }
        let head: IOCallHead
        let effect: JSONValue
        do {
            head = try IOCallHead(reading: message.payload)
            effect = try JSONValue(parsing: Data(message.payload[head.effect]))
        } catch {
            return fail("codec", "the coordinator could not read the io request's head (\(error)); see docs/PROTOCOL.md, 'io calls'")
        }
        guard let group = topology.ioWorkerGroup(for: head.name) else {
            return fail("no-handler", "topology '\(topology.name)' places no worker for io request '\(head.name)'; add it to io[]")
        }
        if let refusal = topology.ioRefusal(of: head.name, from: message.address) {
            return [.warn("worker \(origin): \(refusal); not started")] + fail("forbidden", refusal)
        }
        let candidates = topology.instances(of: group).filter { workers[$0]?.registered == true }
        guard !candidates.isEmpty else {
            return fail("worker-lost", "no worker of group '\(group)' is registered to run '\(head.name)'; retry shortly")
        }
        guard let target = nextTarget(in: group, among: candidates) else {
            return fail("busy", "every worker of group '\(group)' (\(candidates.joined(separator: ", "))) already runs as many io calls "
                + "as ioLimits.concurrentPerWorker allows (\(topology.ioLimits.concurrentPerWorker)), so '\(head.name)' was not started; "
                + "retry later, or raise the limit or the group's count in the topology")
        }
        let id = takeID()
        let timeoutMs = topology.ioTimeoutMs(for: head.name)
        let call = Call(origin: origin, originID: originID, target: target, address: message.address,
                        request: head.name, effect: effect, deadline: now + .milliseconds(timeoutMs), timeoutMs: timeoutMs)
        remember(call, as: id)
        var forwarded = message
        forwarded.header.correlation = id
        return [.toWorker(target, forwarded), publishEffect(call, .started)]
    }

    /// A result from the worker that ran a call: back to the machine's worker, once.
    mutating func finishCall(_ id: UInt64, _ message: WireMessage, from worker: String) -> [CoordinatorAction] {
        // Cancelled meanwhile (the task had finished before the cancel reached it, as its
        // answer will say): never delivered. Only the worker running the call may finish it.
        guard let call = calls[id], call.target == worker else { return [] }
        forget(id)
        var result = message
        result.header.correlation = call.originID
        // The call's address, as the coordinator recorded it, not the one the result names.
        result.address = call.address
        // Only the first byte of a response is read; a failure's small JSON is, for its reason.
        let failed: IOCallResult.Failure?
        do {
            failed = try IOCallResult.failure(in: message.payload)
        } catch {
            failed = IOCallResult.Failure(code: "codec", message: error.message)
        }
        return [.toWorker(call.origin, result),
                publishEffect(call, failed == nil ? .completed : .failed, reason: failed.map { "\($0.code): \($0.message)" })]
    }

    /// The machine's worker cancelled a call (cancel by id, replace, terminal state, stop): the
    /// worker running it is told (``cancel(_:reason:)``), and `cancelled` is published when it
    /// answers that the task ended.
    mutating func cancelCall(from origin: String, originID: UInt64, reason payload: [UInt8]) -> [CoordinatorAction] {
        guard let id = callsByOrigin[origin]?[originID], calls[id] != nil else { return [] }
        let reason = (try? JSONValue(parsing: Data(payload)))?.objectValue?["reason"]?.stringValue ?? "cancelled"
        return cancel(id, reason: reason)
    }


    /// An output from worker number `worker`: each matching route becomes an event for its
    /// target, sent like a client's. One the routes would read differently from its watchers
    /// (a key twice, `+WorkerJSON.swift`) is refused.
    mutating func route(output message: WireMessage, from worker: Int) -> [CoordinatorAction] {
        let name = MachineAddress.machine(of: message.address)
        let routes = topology.routes.filter { $0.from == name }
        var actions: [CoordinatorAction] = [.publish(topic: "output:" + message.address, message)]
        guard !routes.isEmpty else { return actions }
        let output: JSONValue
        switch Self.routedOutput(message.payload) {
        case .success(let value): output = value
        case .failure(.notAnOutput): return actions
        case .failure(.refused(let problem)): return refuse(message, from: worker, problem)
        }
        for route in routes {
            guard route.matches(output) else { continue }
            let event = route.event.map(Self.expandBareCase) ?? output
            let worker: String
            if let refusal = handoffRefusal(route.to) {
                actions += routeFailed(from: message.address, to: route.to, refusal)
                continue
            }
            do {
                worker = try resolve(route.to)
            } catch {
                actions += routeFailed(from: message.address, to: route.to, error)
                continue
            }
            noteInstance(route.to)
            if !handoff.isIdle { noteHost(route.to, worker: number(of: worker)) }
            let id = takeID()
            track(id, Pending(origin: .route(from: message.address), worker: number(of: worker), address: route.to))
            actions.append(.toWorker(worker, WireMessage(Header(.event, flags: .noWait, correlation: id), address: route.to,
                                                         payload: Array(event.jsonData))))
        }
        return actions
    }

    /// A routed event that could not be delivered or was refused: logged, and published on
    /// `route:<from>` so watchers see it (no client is waiting for it).
    func routeFailed(from: String, to: String, _ error: WireError) -> [CoordinatorAction] {
        var error = error
        error.address = to
        error.message = "route from \(from) to \(to): " + error.message
        return [.warn(error.description),
                .publish(topic: "route:" + from, WireMessage(Header(.error), address: to, payload: error.payload))]
    }

    /// `"load"` is short for `{"load":{}}`.
    static func expandBareCase(_ event: JSONValue) -> JSONValue {
        if case .string(let name) = event { return .object([name: .object([:])]) }
        return event
    }
}
