package import DequeModule

/// What the coordinator holds for one client: the replies ZeroMQ has not taken yet (the driver's
/// outbox for that client), in messages and in bytes, and in `bytes` also the large replies
/// ZeroMQ took and has not written to the client's connection yet (`HeldBytes`).
@usableFromInline
package struct ClientBacklog: Sendable, Equatable {
    /// Replies waiting in the outbox.
    @usableFromInline package var messages: Int
    /// Their bytes, and those of the large replies ZeroMQ still holds.
    @usableFromInline package var bytes: Int

    @inlinable
    package init(messages: Int, bytes: Int) {
        self.messages = messages
        self.bytes = bytes
    }

    package static let empty = ClientBacklog(messages: 0, bytes: 0)
}

/// Which of a client's limits (`queues.clientOutbox`, `queues.clientOutboxBytes`) it reached.
package enum ClientLimit: Sendable, Equatable {
    case messages
    case bytes
}

/// Why a reply is owed to a client that fell behind: a `busy` for a request past its queue's
/// limit, or the refusal of a request whose size was refused before anything of it was kept.
package enum OwedReason: Sendable, Equatable {
    case busy(ClientLimit)
    /// The address was longer than `limits.addressBytes`.
    case addressTooLong
    /// The payload was larger than `limits.payloadBytes`.
    case payloadTooLarge
}

/// The replies owed to one client whose queue was full when its requests came, oldest first.
/// They are kept as runs of consecutive correlation ids, not as messages: a client that sends a
/// million requests without reading costs a few words (one run, when its ids count up), not a
/// million replies; each becomes a message only once its queue has room.
///
/// A run keeps the address its requests named while they all named the same one and the
/// client's address bytes stay under half its budget; otherwise its replies go without one (the
/// correlation id is what answers a request). Bounded in bytes (``bytes``): past its budget a
/// request is not recorded and goes unanswered (``ClientLedger/lost``); only a client whose ids
/// do not count up, and that does not read, gets there.
@usableFromInline
package struct OwedBusies: Equatable {
    package struct Run: Equatable {
        package var first: UInt64
        package var count: Int
        package var reason: OwedReason
        /// The address every request of the run named; `nil` when they differ or it was not kept.
        package var address: String?
    }

    /// What one run costs, besides its address: its place in the deque, rounded up.
    package static let runBytes = 48

    package private(set) var runs: Deque<Run> = []
    /// Replies owed, all runs together.
    package private(set) var count = 0
    /// What the runs cost: ``runBytes`` each, and the bytes of the addresses kept.
    package private(set) var bytes = 0

    package var isEmpty: Bool { count == 0 }

    package init() {}

    /// Records a reply owed for `correlation`, within `budget` bytes.
    /// - Parameters:
    ///   - address: The request's address bytes; `nil` for a request whose address is not to be
    ///     kept (one refused for its size).
    ///   - room: Bytes the ledgers of every client may still grow by.
    /// - Returns: The bytes the ledger grew by, or `nil` when the request could not be recorded.
    package mutating func owe(address: UnsafeRawBufferPointer?, correlation: UInt64, reason: OwedReason, budget: Int, room: Int) -> Int? {
        if let last = runs.last, last.reason == reason, last.first &+ UInt64(last.count) == correlation {
            count += 1
            runs[runs.count - 1].count += 1
            guard let kept = last.address else { return 0 }
            if let address, kept.utf8.elementsEqual(address) { return 0 }
            // Requests of one run named different addresses: its replies go without one.
            runs[runs.count - 1].address = nil
            bytes -= kept.utf8.count
            return -kept.utf8.count
        }
        guard bytes + Self.runBytes <= budget, Self.runBytes <= room else { return nil }
        var kept: String?
        if let address, bytes + Self.runBytes + address.count <= budget / 2, Self.runBytes + address.count <= room {
            kept = String(decoding: address, as: UTF8.self)
        }
        let cost = Self.runBytes + (kept?.utf8.count ?? 0)
        runs.append(Run(first: correlation, count: 1, reason: reason, address: kept))
        count += 1
        bytes += cost
        return cost
    }

    /// Takes the oldest reply owed.
    /// - Returns: It, and the bytes the ledger shrank by.
    package mutating func next() -> (address: String?, correlation: UInt64, reason: OwedReason, freed: Int)? {
        guard let head = runs.first else { return nil }
        count -= 1
        var freed = 0
        if head.count == 1 {
            runs.removeFirst()
            freed = Self.runBytes + (head.address?.utf8.count ?? 0)
            bytes -= freed
        } else {
            runs[0].first &+= 1
            runs[0].count -= 1
        }
        return (head.address, head.first, head.reason, freed)
    }
}

/// The accounts with clients that fell behind, kept by whoever answers them (the coordinator;
/// ``ClientRules`` holds it): the replies owed to them and the replies dropped for them. Empty
/// while every client reads its replies.
@usableFromInline
package struct ClientLedger {
    @usableFromInline package var owed: [[UInt8]: OwedBusies] = [:]
    /// What the owed replies of every client cost (their ``OwedBusies/bytes``), against
    /// `limits.owedBytes`.
    package var owedBytes = 0
    /// Replies replaced by `reply-dropped` for each client, since it last went away.
    package var dropped: [[UInt8]: Int] = [:]
    /// Requests of each client that were neither recorded nor answered (its ledger or every
    /// client's was full), since it last went away.
    package var lost: [[UInt8]: Int] = [:]

    package init() {}
}
