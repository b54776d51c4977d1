package import GroveWire

/// What ``ClientRules`` decides beyond a yes or a no, for whoever answers the client to carry out.
package enum ClientRuleAction: Sendable, Equatable {
    /// Send the client (by routing id) this message: a busy, or a refusal, that was owed to it.
    case send([UInt8], WireMessage)
    /// A line for the log.
    case warn(String)
    /// Add this many busies sent to the count the metrics show (a reply dropped is counted by
    /// whoever sends ``ClientRules/admitReply(to:size:kind:correlation:address:backlog:)``'s
    /// replacement).
    case countedBusies(Int)
}

/// The rules that keep the promise "every request gets exactly one reply" under clients that do
/// not read, in bounded memory: a pure value, held by whoever answers clients (the coordinator,
/// and a worker serving clients directly: docs/DIRECT-ROUTES.md, 2.3).
///
/// A client has too much outstanding when the replies held for it (`backlog`, what ZeroMQ has not
/// taken) and the busies owed to it reach `queues.clientOutbox` messages, or those replies reach
/// `queues.clientOutboxBytes` bytes: each further request is owed a `busy` naming the limit, sent
/// once its queue has room (``releaseBusies(to:backlog:)``). A reply that does not fit in the
/// bytes is replaced by a small `reply-dropped` error
/// (``admitReply(to:size:kind:correlation:address:backlog:)``).
package struct ClientRules {
    /// Replies this small are always queued: their number is bounded by the requests let through,
    /// and refusing one would only put another small reply in its place.
    package static let smallReply = 1024

    /// Busies owed to clients that fell behind, replies dropped for them.
    @usableFromInline package private(set) var ledger = ClientLedger()
    /// `queues.clientOutbox`: replies waiting and busies owed, per client.
    package let clientOutbox: Int
    /// `queues.clientOutboxBytes`: bytes of replies waiting, per client.
    package let clientOutboxBytes: Int
    /// `limits.owedBytesPerClient` and `limits.owedBytes`: what the ledger may keep.
    package let owedBytesPerClient: Int
    package let owedBytes: Int
    /// `limits.addressBytes` and the largest payload accepted, for the refusals owed for a size.
    package let addressBytes: Int
    package let payloadBytes: Int
    /// Who answers the clients, for the texts: "the coordinator", or "worker NAME" for a worker
    /// serving direct routes.
    package let answerer: String

    package init(clientOutbox: Int, clientOutboxBytes: Int, owedBytesPerClient: Int, owedBytes: Int, addressBytes: Int, payloadBytes: Int,
                 answerer: String = "the coordinator") {
        self.answerer = answerer
        self.clientOutbox = clientOutbox
        self.clientOutboxBytes = clientOutboxBytes
        self.owedBytesPerClient = owedBytesPerClient
        self.owedBytes = owedBytes
        self.addressBytes = addressBytes
        self.payloadBytes = payloadBytes
    }

    /// The topology's numbers; `payloadBytes` when a test gives another than `limits.payloadBytes`.
    package init(topology: Topology, payloadBytes: Int? = nil) {
        self.init(clientOutbox: topology.queues.clientOutbox, clientOutboxBytes: topology.queues.clientOutboxBytes,
                  owedBytesPerClient: topology.limits.owedBytesPerClient, owedBytes: topology.limits.owedBytes,
                  addressBytes: topology.limits.addressBytes, payloadBytes: payloadBytes ?? topology.limits.payloadBytes)
    }

    /// Whether a busy is owed to anyone: while not, and nothing waits for a client, its requests
    /// cost ``owesBusy(to:correlation:address:refusal:backlog:)`` one comparison.
    @inlinable
    package var owesAny: Bool { !ledger.owed.isEmpty }

    /// The clients busies are owed to: offered ``releaseBusies(to:backlog:)`` after a turn and on
    /// every tick.
    package var clientsOwed: [[UInt8]] { Array(ledger.owed.keys) }

    /// The limit a client with `backlog` waiting and `owed` busies owed has reached, if any.
    /// Static, and given the numbers: a call on `self` for each request made the optimizer copy
    /// the value around it (in the coordinator, its whole core).
    package static func limit(reachedBy backlog: ClientBacklog, owed: Int, clientOutbox: Int, clientOutboxBytes: Int) -> ClientLimit? {
        if backlog.messages + owed >= clientOutbox { return .messages }
        if backlog.bytes >= clientOutboxBytes { return .bytes }
        return nil
    }

    /// Whether a request from `client` must be refused because the client has too much
    /// outstanding: if so the reply it is owed is recorded (``releaseBusies(to:backlog:)`` sends
    /// it) and what to do now is returned: nothing, or a warning when the client just fell
    /// behind or its ledger is full. Free while nothing waits for the client and no busy is owed
    /// to anyone: its caller keeps that guard inline (``owesAny``, `@inlinable`), and calls this
    /// only for a client something waits for.
    /// - Parameters:
    ///   - address: The request's address bytes, kept with the busy while the ledger has room;
    ///     `nil` for a request refused for its size, whose reply is that refusal, not a busy.
    ///   - refusal: Why the request is refused, when it is, for its size.
    /// - Returns: `nil` when the request may go on; else only `.warn`s.
    package mutating func owesBusy(to client: [UInt8], correlation: UInt64, address: UnsafeRawBufferPointer?,
                                   refusal: OwedReason? = nil, backlog: ClientBacklog) -> [ClientRuleAction]? {
        guard backlog.bytes > 0 || owesAny else { return nil }
        // The count only: a copy of the entry held across the write below would make it copy
        // all the client's runs, once per request (quadratic in the busies owed: on bf2b560 the
        // coordinator's loop stalled past its workers' heartbeat timeout).
        let owed = ledger.owed[client]?.count
        guard let limit = Self.limit(reachedBy: backlog, owed: owed ?? 0, clientOutbox: clientOutbox,
                                     clientOutboxBytes: clientOutboxBytes) else { return nil }
        return owe(client, correlation: correlation, address: address, reason: refusal ?? .busy(limit), owedBefore: owed, backlog: backlog)
    }

    /// Records a reply owed to `client` (``owesBusy(to:correlation:address:refusal:backlog:)``
    /// found it behind); `owedBefore`: what was owed to it before, `nil` for nothing.
    package mutating func owe(_ client: [UInt8], correlation: UInt64, address: UnsafeRawBufferPointer?, reason: OwedReason,
                              owedBefore: Int?, backlog: ClientBacklog) -> [ClientRuleAction] {
        let room = owedBytes - ledger.owedBytes
        let grown = ledger.owed[client, default: OwedBusies()].owe(
            address: address, correlation: correlation, reason: reason, budget: owedBytesPerClient, room: room)
        ledger.owedBytes += grown ?? 0
        if grown == nil {
            if ledger.owed[client]?.isEmpty == true { ledger.owed[client] = nil }
            let lost = ledger.lost[client, default: 0] + 1
            ledger.lost[client] = lost
            // Logged the first time and every 10,000th: the client is not told (it does not read).
            guard lost == 1 || lost % 10_000 == 0 else { return [] }
            return [.warn("a client that does not read its replies sent \(lost) request(s) \(answerer) can no longer remember "
                          + "a reply for (\(ledger.owed[client]?.bytes ?? 0) bytes owed to it, limits.owedBytesPerClient \(owedBytesPerClient); "
                          + "\(ledger.owedBytes) to every client, limits.owedBytes \(owedBytes)): they go unanswered. Its "
                          + "correlation ids do not count up, so its owed replies cannot be kept as runs; client \(Self.hex(client))")]
        }
        guard owedBefore == nil else { return [] }
        return [.warn("a client is not reading its replies (\(backlog.messages) waiting, \(backlog.bytes) bytes; queues.clientOutbox "
                      + "\(clientOutbox), queues.clientOutboxBytes \(clientOutboxBytes)): its requests are answered "
                      + "busy until it catches up; client \(Self.hex(client))")]
    }

    /// The busies owed to `client` that fit in its queue now, oldest first: while the replies
    /// waiting for it (`backlog`, and the busies sent here) stay under both limits, at most
    /// `queues.clientOutbox` per call. The sends, then what they count.
    package mutating func releaseBusies(to client: [UInt8], backlog: ClientBacklog) -> [ClientRuleAction] {
        guard var owed = ledger.owed.removeValue(forKey: client) else { return [] }
        defer { if !owed.isEmpty { ledger.owed[client] = owed } }
        var waiting = backlog
        var actions: [ClientRuleAction] = []
        var busies = 0
        // Runs share an address and a reason: each reply's payload is encoded once per run.
        var last: (address: String?, reason: OwedReason, payload: [UInt8])?
        while waiting.messages < clientOutbox, waiting.bytes < clientOutboxBytes,
              actions.count < clientOutbox, let reply = owed.next() {
            ledger.owedBytes -= reply.freed
            if case .busy = reply.reason { busies += 1 }
            if last?.address != reply.address || last?.reason != reply.reason {
                last = (reply.address, reply.reason, owedReply(reply.reason, address: reply.address ?? "").payload)
            }
            let message = WireMessage(Header(.error, correlation: reply.correlation), address: reply.address ?? "", payload: last!.payload)
            // As the driver counts it: the routing id, the header, the address and the payload.
            waiting.messages += 1
            waiting.bytes += client.count + Header.size + message.address.utf8.count + message.payload.count
            actions.append(.send(client, message))
        }
        if busies > 0 { actions.append(.countedBusies(busies)) }
        return actions
    }

    /// The error a reply owed for `reason` carries.
    package func owedReply(_ reason: OwedReason, address: String) -> WireError {
        switch reason {
        case .busy(let limit): clientBusy(limit, address: address)
        case .addressTooLong: AddressChecks.addressTooLong(nil, limit: addressBytes, correlation: nil)
        case .payloadTooLarge: AddressChecks.payloadTooLarge(nil, limit: payloadBytes, address: nil, answerer: answerer)
        }
    }

    /// The `busy` a client that reached `limit` gets, naming it.
    package func clientBusy(_ limit: ClientLimit, address: String) -> WireError {
        let text = switch limit {
        case .messages:
            "this client has \(clientOutbox) replies waiting unread at \(answerer) or owed to it "
                + "(queues.clientOutbox); read your replies, then retry"
        case .bytes:
            "the replies waiting unread for this client at \(answerer) hold \(clientOutboxBytes) bytes or more "
                + "(queues.clientOutboxBytes); read your replies, then retry"
        }
        return WireError(.busy, text, address: address.isEmpty ? nil : address)
    }

    /// What to send `client` in place of a reply of `size` bytes (header, address and payload):
    /// `nil` when the reply may join what waits for it, else a small `reply-dropped` error
    /// under the same correlation id (for the caller to send in the reply's place, and count),
    /// and a warning for the log now and then.
    ///
    /// A reply is let through when nothing waits for the client (it is the one message that
    /// waits over the budget), when it is small (``smallReply``), or when it fits in
    /// `queues.clientOutboxBytes` with what waits: the outbox, and the large replies ZeroMQ still
    /// holds for the client (`HeldBytes`).
    package mutating func admitReply(to client: [UInt8], size: Int, kind: MessageKind, correlation: UInt64, address: String,
                                     backlog: ClientBacklog) -> (replacement: WireMessage, warning: String?)? {
        let budget = clientOutboxBytes
        guard backlog.bytes > 0, size > Self.smallReply, backlog.bytes + size > budget else { return nil }
        let dropped = ledger.dropped[client, default: 0] + 1
        ledger.dropped[client] = dropped
        let error = WireError(.replyDropped,
            "the \(kind.name) reply to this request (\(size) bytes) did not fit in the \(budget) bytes \(answerer) "
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
    package mutating func forget(client: [UInt8]) {
        ledger.owedBytes -= ledger.owed.removeValue(forKey: client)?.bytes ?? 0
        ledger.dropped[client] = nil
        ledger.lost[client] = nil
    }

    /// A routing id in hex, for the log.
    package static func hex(_ identity: [UInt8]) -> String {
        identity.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
    }
}
