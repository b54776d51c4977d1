import DequeModule

/// What the coordinator holds for one client: the replies ZeroMQ has not taken yet (the driver's
/// outbox for that client), in messages and in bytes.
struct ClientBacklog: Sendable, Equatable {
    var messages: Int
    var bytes: Int

    static let empty = ClientBacklog(messages: 0, bytes: 0)
}

/// Which of a client's limits (`queues.clientOutbox`, `queues.clientOutboxBytes`) it reached.
enum ClientLimit: Sendable, Equatable {
    case messages
    case bytes
}

/// The `busy` replies owed to one client whose queue was full when its requests came, oldest
/// first. They are kept as runs of consecutive correlation ids to one address, not as messages:
/// a client that sends a million requests without reading costs a few words (one run, when its
/// ids count up), not a million replies; each becomes a message only once its queue has room.
struct OwedBusies: Equatable {
    struct Run: Equatable {
        var address: String
        var first: UInt64
        var count: Int
        var limit: ClientLimit
    }

    private(set) var runs: Deque<Run> = []
    /// Busies owed, all runs together.
    private(set) var count = 0

    var isEmpty: Bool { count == 0 }

    mutating func owe(address: String, correlation: UInt64, limit: ClientLimit) {
        count += 1
        if let last = runs.last, last.address == address, last.limit == limit,
           last.first &+ UInt64(last.count) == correlation {
            runs[runs.count - 1].count += 1
        } else {
            runs.append(Run(address: address, first: correlation, count: 1, limit: limit))
        }
    }

    /// Takes the oldest busy owed.
    mutating func next() -> (address: String, correlation: UInt64, limit: ClientLimit)? {
        guard let head = runs.first else { return nil }
        count -= 1
        if head.count == 1 {
            runs.removeFirst()
        } else {
            runs[0].first &+= 1
            runs[0].count -= 1
        }
        return (head.address, head.first, head.limit)
    }
}

/// The coordinator's accounts with clients that fell behind: the busies it owes them and the
/// replies it dropped for them. Empty while every client reads its replies.
struct ClientLedger {
    var owed: [[UInt8]: OwedBusies] = [:]
    /// Replies replaced by `reply-dropped` for each client, since it last went away.
    var dropped: [[UInt8]: Int] = [:]
}
