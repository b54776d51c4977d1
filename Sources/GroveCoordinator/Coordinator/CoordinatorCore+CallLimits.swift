import Foundation
@_spi(GroveInternal) import GroveWire

/// The two limits on io calls between workers (the topology's `ioLimits` and `io[].timeoutMs`):
/// a call runs at most its timeout, and a worker runs at most `concurrentPerWorker` calls for
/// other workers' machines. Both are decided here, on the calls the coordinator already keeps,
/// with no timer per call: a tick compares the earliest deadline with its time.
extension CoordinatorCore {
    /// Keeps a call started under `id` until its result, cancel, timeout or a worker's loss, and
    /// counts its task against its worker's limit until the task ended or that worker is lost.
    mutating func remember(_ call: Call, as id: UInt64) {
        calls[id] = call
        callsByOrigin[call.origin, default: [:]][call.originID] = id
        callsRunning[call.target, default: 0] += 1
        if earliestCallDeadline.map({ call.deadline < $0 }) ?? true { earliestCallDeadline = call.deadline }
    }

    /// Forgets call `id` (answered, or its worker lost): it is no longer in flight, and its
    /// task no longer counts against its worker's limit. Its deadline stays in
    /// `earliestCallDeadline` until the tick that looks and finds nothing due.
    mutating func forget(_ id: UInt64) {
        guard let call = takeOutOfFlight(id) else { return }
        freePlace(on: call.target)
    }

    /// Takes call `id` out of flight (nothing of it is delivered any more) while its task may
    /// still run: a cancelled call keeps its place until its worker says the task ended
    /// (`+Cancels.swift`), so the limit counts tasks really running, not calls still awaited.
    mutating func takeOutOfFlight(_ id: UInt64) -> Call? {
        guard let call = calls.removeValue(forKey: id) else { return nil }
        callsByOrigin[call.origin]?[call.originID] = nil
        if callsByOrigin[call.origin]?.isEmpty == true { callsByOrigin[call.origin] = nil }
        return call
    }

    /// One task fewer runs on `worker`: its place is free for the next call.
    mutating func freePlace(on worker: String) {
        let running = (callsRunning[worker] ?? 1) - 1
        callsRunning[worker] = running > 0 ? running : nil
    }

    /// The instance of `group` the next call goes to: round robin over `candidates` (the
    /// registered ones, in topology order), passing over those at `ioLimits.concurrentPerWorker`;
    /// `nil` when every one is.
    mutating func nextTarget(in group: String, among candidates: [String]) -> String? {
        let limit = topology.ioLimits.concurrentPerWorker
        let turn = roundRobin[group, default: 0]
        for step in 0..<candidates.count {
            let target = candidates[(turn &+ step) % candidates.count]
            guard callsRunning[target, default: 0] < limit else { continue }
            roundRobin[group] = turn &+ step &+ 1
            return target
        }
        return nil
    }

    /// Calls whose deadline has passed at `now`, in the order they were started: each origin is
    /// answered `timeout` (its machine stops waiting) and the call is cancelled where it runs as
    /// a machine's cancel is (``cancel(_:reason:publishing:)``: its task is cancelled, its late
    /// result never sent); the effect is published `failed` with reason `timeout: …` once that
    /// worker says the task ended.
    mutating func expireCalls(now: ContinuousClock.Instant) -> [CoordinatorAction] {
        guard let earliest = earliestCallDeadline, earliest <= now else { return [] }
        var expired: [(id: UInt64, call: Call)] = []
        var next: ContinuousClock.Instant?
        for (id, call) in calls {
            if call.deadline <= now {
                expired.append((id, call))
            } else if next.map({ call.deadline < $0 }) ?? true {
                next = call.deadline
            }
        }
        earliestCallDeadline = next
        var actions: [CoordinatorAction] = []
        for (id, call) in expired.sorted(by: { $0.id < $1.id }) {
            let text = "'\(call.request)' ran longer than its timeout of \(call.timeoutMs) ms on worker \(call.target) and was cancelled there; "
                + "it may or may not have taken effect. Raise its timeoutMs in the topology's io[] (or ioLimits.timeoutMs) if it needs longer"
            actions.append(.toWorker(call.origin, WireMessage(Header(.ioResult, correlation: call.originID), address: call.address,
                                                              payload: IOCallResult.payload(failing: "timeout", text))))
            actions += cancel(id, reason: "timeout: " + text, publishing: .failed)
        }
        return actions
    }
}
