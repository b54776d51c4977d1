import GroveWire

extension WorkerCore {
    /// An io call of another worker's machine, served here.
    enum Served: Equatable {
        /// Its task runs; its result is sent when it ends.
        case running
        /// `io-cancel` came and its task was cancelled: when the task ends, `io-cancelled` goes
        /// instead of the result.
        case cancelling
    }

    /// What to send when the task serving a call ends (``taskEnded(_:)``).
    enum ServedEnd: Equatable {
        /// Its result (`io-result`).
        case result
        /// `io-cancelled`: the task ended after its cancel.
        case cancelled(IOCancelAnswer.TaskFate)
        /// Nothing: the call is not served here (any more).
        case nothing
    }

    /// `io-cancel` for call `id`: a running task is cancelled and answered for once it has
    /// ended; a call with no task here is answered at once, saying whether its task had
    /// finished (its result crossed the cancel) or is unknown; a second cancel waits with the
    /// first.
    mutating func cancelServing(_ id: UInt64) -> Decision {
        switch serving[id] {
        case .running?:
            serving[id] = .cancelling
            return .stopServing
        case .cancelling?:
            return .ignore
        case nil:
            return .answerCancel(finishedCalls.contains(id) ? .finished : .unknown)
        }
    }

    /// The task serving call `id` ended: send its result, or, when it was cancelled, say that
    /// it ended. Either way the call is no longer served.
    mutating func taskEnded(_ id: UInt64) -> ServedEnd {
        switch serving.removeValue(forKey: id) {
        case .running?:
            finishedCalls.insert(id)
            return .result
        case .cancelling?:
            return .cancelled(.ended)
        case nil:
            return .nothing
        }
    }
}

/// The last `capacity` ids inserted, for "did this happen lately?": bounded however many come.
struct RecentIDs: Equatable {
    let capacity: Int
    private var ring: [UInt64] = []
    private var next = 0
    private var members: Set<UInt64> = []

    init(capacity: Int) {
        precondition(capacity > 0, "RecentIDs needs room for at least one id")
        self.capacity = capacity
    }

    mutating func insert(_ id: UInt64) {
        guard members.insert(id).inserted else { return }
        if ring.count < capacity {
            ring.append(id)
        } else {
            members.remove(ring[next])
            ring[next] = id
            next = (next + 1) % capacity
        }
    }

    func contains(_ id: UInt64) -> Bool { members.contains(id) }
}
