package import GroveWire

/// The bound on the requests held unanswered for one worker: `queues.workerOutbox` requests, and
/// `queues.workerOutboxBytes` bytes of requests with the replies they are expected to bring back;
/// half of each for a client whose replies wait unread, so whatever it sends, the other half stays
/// for everyone else's requests. One rule for both who hold such requests: the coordinator, for
/// what it forwards to a worker, and a worker serving direct routes, for what its own clients sent
/// it (docs/DIRECT-ROUTES.md, 2.3). Only the texts differ, naming who holds them.
package enum RequestBound {
    /// Who holds the requests, for the texts.
    package enum Holder: Sendable, Equatable {
        /// The coordinator, for what it forwarded to the worker of this name.
        case coordinator(forWorker: String)
        /// The worker of this name, for the direct requests its clients sent it.
        case worker(String)
    }

    /// Why one more request of `bytes` bytes cannot be held now, if it cannot: a `busy` naming
    /// the limit reached. With nothing unanswered any request is taken.
    /// - Parameters:
    ///   - unanswered: Requests held unanswered now.
    ///   - heldBytes: Their bytes.
    ///   - expectedReplyBytes: The size each of their replies is expected to have (0 when replies
    ///     are not counted: a worker sees each reply's size as it sends it).
    ///   - readsSlowly: Whether the request's client has replies waiting unread: it may fill
    ///     only half.
    @inlinable
    package static func busy(unanswered: Int, heldBytes: Int, adding bytes: Int, expectedReplyBytes: Int, workerOutbox: Int,
                             workerOutboxBytes: Int, holder: Holder, address: String?, readsSlowly: Bool) -> WireError? {
        guard unanswered < workerOutbox else { return full(workerOutbox, holder: holder, address: address) }
        guard unanswered > 0 else { return nil }
        let expected = heldBytes + bytes + (unanswered + 1) * expectedReplyBytes
        if readsSlowly, unanswered >= max(1, workerOutbox / 2) || expected > workerOutboxBytes / 2 {
            return halfFull(holder: holder, address: address)
        }
        guard expected > workerOutboxBytes else { return nil }
        return bytesFull(unanswered: unanswered, heldBytes: heldBytes, expectedReplyBytes: expectedReplyBytes,
                         workerOutboxBytes: workerOutboxBytes, holder: holder, address: address)
    }

    /// `queues.workerOutbox` requests unanswered.
    @usableFromInline
    package static func full(_ workerOutbox: Int, holder: Holder, address: String?) -> WireError {
        let text = switch holder {
        case .coordinator(let worker): "worker \(worker) has \(workerOutbox) requests unanswered (queues.workerOutbox); retry later"
        case .worker(let worker): "worker \(worker) has \(workerOutbox) direct requests unanswered (queues.workerOutbox); retry later"
        }
        return WireError(.busy, text, address: address)
    }

    /// The half a client that does not read may fill is full.
    @usableFromInline
    package static func halfFull(holder: Holder, address: String?) -> WireError {
        let text = switch holder {
        case .coordinator(let worker):
            "this client's replies wait unread at the coordinator, so its requests may fill at most half of worker \(worker)'s "
                + "queue (queues.workerOutbox, queues.workerOutboxBytes), and that half is full; read your replies, then retry"
        case .worker(let worker):
            "this client's replies wait unread at worker \(worker), so its requests may fill at most half of the worker's queue "
                + "(queues.workerOutbox, queues.workerOutboxBytes), and that half is full; read your replies, then retry"
        }
        return WireError(.busy, text, address: address)
    }

    /// `queues.workerOutboxBytes` reached.
    @usableFromInline
    package static func bytesFull(unanswered: Int, heldBytes: Int, expectedReplyBytes: Int, workerOutboxBytes: Int, holder: Holder,
                                  address: String?) -> WireError {
        let text = switch holder {
        case .coordinator(let worker):
            "worker \(worker) has \(unanswered) requests unanswered, which with the replies expected back (about "
                + "\(expectedReplyBytes) bytes each) reach \(workerOutboxBytes) bytes (queues.workerOutboxBytes); retry later"
        case .worker(let worker):
            "worker \(worker) has \(unanswered) direct requests unanswered holding \(heldBytes) bytes, which with this one pass "
                + "\(workerOutboxBytes) bytes (queues.workerOutboxBytes); retry later"
        }
        return WireError(.busy, text, address: address)
    }
}
