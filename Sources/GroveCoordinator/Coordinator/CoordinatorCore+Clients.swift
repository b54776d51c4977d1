import GroveCluster
import GroveWire

/// The rules that keep the promise "every request gets exactly one reply" under clients that do
/// not read, in bounded memory. A client has too much outstanding when the replies the
/// coordinator holds for it (`backlog`, what ZeroMQ has not taken) and the busies it owes it
/// reach `queues.clientOutbox` messages, or those replies reach `queues.clientOutboxBytes`
/// bytes: each further request is owed a `busy` naming the limit, sent once its queue has room
/// (``releaseBusies(to:backlog:)``). A reply that does not fit in the bytes is replaced by a small
/// `reply-dropped` error (``admitReply(to:size:kind:correlation:address:backlog:)``).
extension CoordinatorCore {
    /// Replies this small are always queued: their number is bounded by the requests let through,
    /// and refusing one would only put another small reply in its place.
    static let smallReply = 1024

    /// The limit a client with `backlog` waiting and `owed` busies owed has reached, if any.
    /// Static, and given the queues: called on `self` from ``owesBusy(to:correlation:address:backlog:)``,
    /// for each client request, it made the optimizer copy the whole core (a retain and a
    /// release of each of its tables per request).
    static func clientLimit(reachedBy backlog: ClientBacklog, owed: Int, queues: Topology.Queues) -> ClientLimit? {
        if backlog.messages + owed >= queues.clientOutbox { return .messages }
        if backlog.bytes >= queues.clientOutboxBytes { return .bytes }
        return nil
    }

    /// Whether a request from `client` must be refused because the client has too much
    /// outstanding: if so the reply it is owed is recorded (``releaseBusies(to:backlog:)`` sends
    /// it) and what to do now is returned: nothing, or a warning when the client just fell
    /// behind or its ledger is full. Free while nothing waits for the client and no busy is owed
    /// to anyone.
    /// - Parameters:
    ///   - address: The request's address bytes, kept with the busy while the ledger has room;
    ///     `nil` for a request refused for its size (``sizeRefusal(_:)``), whose reply is that
    ///     refusal, not a busy.
    ///   - refusal: Why the request is refused, when it is, for its size.
    mutating func owesBusy(to client: [UInt8], correlation: UInt64, address: UnsafeRawBufferPointer?,
                           refusal: OwedReason? = nil, backlog: ClientBacklog) -> [CoordinatorAction]? {
        guard backlog.bytes > 0 || !clientLedger.owed.isEmpty else { return nil }
        // The count only: a copy of the entry held across the write below would make it copy
        // all the client's runs, once per request (quadratic in the busies owed: on bf2b560 the
        // coordinator's loop stalled past its workers' heartbeat timeout).
        let owed = clientLedger.owed[client]?.count
        guard let limit = Self.clientLimit(reachedBy: backlog, owed: owed ?? 0, queues: topology.queues) else { return nil }
        let limits = topology.limits
        let room = limits.owedBytes - clientLedger.owedBytes
        let grown = clientLedger.owed[client, default: OwedBusies()].owe(
            address: address, correlation: correlation, reason: refusal ?? .busy(limit), budget: limits.owedBytesPerClient, room: room)
        clientLedger.owedBytes += grown ?? 0
        if grown == nil {
            if clientLedger.owed[client]?.isEmpty == true { clientLedger.owed[client] = nil }
            let lost = clientLedger.lost[client, default: 0] + 1
            clientLedger.lost[client] = lost
            // Logged the first time and every 10,000th: the client is not told (it does not read).
            guard lost == 1 || lost % 10_000 == 0 else { return [] }
            return [.warn("a client that does not read its replies sent \(lost) request(s) the coordinator can no longer remember "
                          + "a reply for (\(clientLedger.owed[client]?.bytes ?? 0) bytes owed to it, limits.owedBytesPerClient \(limits.owedBytesPerClient); "
                          + "\(clientLedger.owedBytes) to every client, limits.owedBytes \(limits.owedBytes)): they go unanswered. Its "
                          + "correlation ids do not count up, so its owed replies cannot be kept as runs; client \(Self.hex(client))")]
        }
        guard owed == nil else { return [] }
        let queues = topology.queues
        return [.warn("a client is not reading its replies (\(backlog.messages) waiting, \(backlog.bytes) bytes; queues.clientOutbox "
                      + "\(queues.clientOutbox), queues.clientOutboxBytes \(queues.clientOutboxBytes)): its requests are answered "
                      + "busy until it catches up; client \(Self.hex(client))")]
    }

    /// The clients busies are owed to: the driver offers each ``releaseBusies(to:backlog:)``
    /// after a turn and on every tick.
    var clientsOwedBusies: [[UInt8]] { Array(clientLedger.owed.keys) }

    /// The busies owed to `client` that fit in its queue now, oldest first: while the replies
    /// waiting for it (`backlog`, and the busies sent here) stay under both limits, at most
    /// `queues.clientOutbox` per call.
    mutating func releaseBusies(to client: [UInt8], backlog: ClientBacklog) -> [CoordinatorAction] {
        guard var owed = clientLedger.owed.removeValue(forKey: client) else { return [] }
        defer { if !owed.isEmpty { clientLedger.owed[client] = owed } }
        let queues = topology.queues
        var waiting = backlog
        var actions: [CoordinatorAction] = []
        // Runs share an address and a reason: each reply's payload is encoded once per run.
        var last: (address: String?, reason: OwedReason, payload: [UInt8])?
        while waiting.messages < queues.clientOutbox, waiting.bytes < queues.clientOutboxBytes,
              actions.count < queues.clientOutbox, let reply = owed.next() {
            clientLedger.owedBytes -= reply.freed
            if case .busy = reply.reason { counts.busy += 1 }
            if last?.address != reply.address || last?.reason != reply.reason {
                last = (reply.address, reply.reason, owedReply(reply.reason, address: reply.address ?? "").payload)
            }
            let message = WireMessage(Header(.error, correlation: reply.correlation), address: reply.address ?? "", payload: last!.payload)
            // As the driver counts it: the routing id, the header, the address and the payload.
            waiting.messages += 1
            waiting.bytes += client.count + Header.size + message.address.utf8.count + message.payload.count
            actions.append(.toClient(client, message))
        }
        return actions
    }

    /// The error a reply owed for `reason` carries.
    func owedReply(_ reason: OwedReason, address: String) -> WireError {
        switch reason {
        case .busy(let limit): clientBusy(limit, address: address)
        case .addressTooLong: Self.addressTooLong(nil, limit: topology.limits.addressBytes, correlation: nil)
        case .payloadTooLarge: Self.payloadTooLarge(nil, limit: maxPayload, address: nil)
        }
    }

    /// The `busy` a client that reached `limit` gets, naming it.
    func clientBusy(_ limit: ClientLimit, address: String) -> WireError {
        let queues = topology.queues
        let text = switch limit {
        case .messages:
            "this client has \(queues.clientOutbox) replies waiting unread at the coordinator or owed to it "
                + "(queues.clientOutbox); read your replies, then retry"
        case .bytes:
            "the replies waiting unread for this client at the coordinator hold \(queues.clientOutboxBytes) bytes or more "
                + "(queues.clientOutboxBytes); read your replies, then retry"
        }
        return WireError(.busy, text, address: address.isEmpty ? nil : address)
    }

    /// What to send `client` in place of a reply of `size` bytes (header, address and payload):
    /// `nil` when the reply may join what waits for it, else a small `reply-dropped` error
    /// under the same correlation id, and a warning for the log now and then.
    ///
    /// A reply is let through when nothing waits for the client (it is the one message that
    /// waits over the budget), when it is small (``smallReply``), or when it fits in
    /// `queues.clientOutboxBytes` with what waits: the outbox, and the large replies ZeroMQ still
    /// holds for the client (`HeldBytes`).
    mutating func admitReply(to client: [UInt8], size: Int, kind: MessageKind, correlation: UInt64, address: String,
                             backlog: ClientBacklog) -> (replacement: WireMessage, warning: String?)? {
        let budget = topology.queues.clientOutboxBytes
        guard backlog.bytes > 0, size > Self.smallReply, backlog.bytes + size > budget else { return nil }
        counts.replyDropped += 1
        let dropped = clientLedger.dropped[client, default: 0] + 1
        clientLedger.dropped[client] = dropped
        let error = WireError(.replyDropped,
            "the \(kind.name) reply to this request (\(size) bytes) did not fit in the \(budget) bytes the coordinator "
                + "holds for a client that does not read (queues.clientOutboxBytes; \(backlog.bytes) wait unread): it was "
                + "dropped, the request itself was handled. Read your replies sooner, then ask again (a get returns the state)",
            address: address.isEmpty ? nil : address)
        let warning: String? = dropped == 1 || dropped % 1000 == 0
            ? "a client is not reading its replies: \(dropped) dropped so far (\(size) bytes the last, \(backlog.bytes) waiting; "
                + "queues.clientOutboxBytes \(budget)), each answered reply-dropped; client \(Self.hex(client))"
            : nil
        return (WireMessage.error(error, correlation: correlation), warning)
    }

    /// Forgets a client that went away: the busies owed to it and what was dropped for it.
    mutating func forget(client: [UInt8]) {
        batchingClients.remove(client)
        clientLedger.owedBytes -= clientLedger.owed.removeValue(forKey: client)?.bytes ?? 0
        clientLedger.dropped[client] = nil
        clientLedger.lost[client] = nil
    }

    static func hex(_ identity: [UInt8]) -> String {
        identity.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
    }
}
