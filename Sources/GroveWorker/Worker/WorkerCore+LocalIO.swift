import Grove
import GroveWire

/// io calls a worker's machines run on the worker's own handlers (requests placed nowhere, or
/// on the worker's own group) time out as calls to other workers do, decided here rather than by
/// a timer per call: the runtime notes each call's start and end, and a tick says which ran past
/// their deadline (the welcome's `io[].timeoutMs` of the request, else `ioLimits.timeoutMs`).
extension WorkerCore {
    /// A local io call in flight.
    struct LocalCall: Equatable {
        let address: String
        let request: String
        let deadline: ContinuousClock.Instant
        let timeoutMs: Int
    }

    /// A local call the tick found past its deadline, and what its machine hears.
    struct LocalTimeout: Sendable, Equatable {
        let call: UInt64
        let address: String
        let failure: IOFailure
    }

    /// How long a call of `request` may run on this worker's own handlers.
    func localTimeoutMs(for request: String) -> Int {
        localIOTimeoutsMs[request] ?? ioTimeoutMs
    }

    /// A machine at `address` starts io request `request` on this worker's own handlers.
    /// - Returns: The call's id, under which the runtime keeps its task and its waiting machine.
    mutating func startLocalCall(address: String, request: String, now: ContinuousClock.Instant) -> UInt64 {
        let call = nextCall
        nextCall += 1
        let timeoutMs = localTimeoutMs(for: request)
        let deadline = now + .milliseconds(timeoutMs)
        localCalls[call] = LocalCall(address: address, request: request, deadline: deadline, timeoutMs: timeoutMs)
        if earliestLocalDeadline.map({ deadline < $0 }) ?? true { earliestLocalDeadline = deadline }
        return call
    }

    /// Local call `call` ended (its handler answered, or its machine cancelled it).
    /// - Returns: Whether it was still running: `false` once it timed out (its machine has its
    ///   answer already).
    mutating func endLocalCall(_ call: UInt64) -> Bool {
        localCalls.removeValue(forKey: call) != nil
    }

    /// The local calls past their deadline at `now`, forgotten here, in the order they started:
    /// their tasks are to be cancelled and their machines answered `timeout`.
    mutating func expireLocalCalls(now: ContinuousClock.Instant) -> [WorkerAction] {
        guard let earliest = earliestLocalDeadline, earliest <= now else { return [] }
        var expired: [(id: UInt64, call: LocalCall)] = []
        var next: ContinuousClock.Instant?
        for (id, call) in localCalls {
            if call.deadline <= now {
                expired.append((id, call))
            } else if next.map({ call.deadline < $0 }) ?? true {
                next = call.deadline
            }
        }
        earliestLocalDeadline = next
        guard !expired.isEmpty else { return [] }
        let timeouts = expired.sorted { $0.id < $1.id }.map { id, call in
            localCalls[id] = nil
            return LocalTimeout(call: id, address: call.address, failure: IOFailure(.timeout,
                "'\(call.request)' ran longer than its timeout of \(call.timeoutMs) ms on worker \(worker) and was cancelled; "
                    + "it may or may not have taken effect. Raise its timeoutMs in the topology's io[] (or ioLimits.timeoutMs) if it needs longer"))
        }
        return [.timeOutLocalCalls(timeouts)]
    }
}
