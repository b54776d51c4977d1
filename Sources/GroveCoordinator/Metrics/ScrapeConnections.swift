/// The metrics endpoint's open connections, decided without sockets or a clock: the driver
/// passes each STREAM frame and the time, and does what comes back (docs/ARCHITECTURE.md,
/// "Metrics", for why these bounds). Any local user can open TCP connections to loopback, so:
///
/// - at most ``limit`` connections are held; one more is closed at once, unread;
/// - a connection has ``deadline`` from its opening to send its whole request head (at most
///   ``MetricsHTTP/headLimit`` bytes, kept and scanned once each); past it, it gets 408 and is
///   closed, so a client that sends a byte a second, or nothing, holds its place that long only;
/// - an answered connection keeps its place until its client closes or the deadline passes:
///   libzmq tells of a close by the client, not of one the coordinator asked for, and an
///   answer still being written still holds memory.
struct ScrapeConnections {
    /// What the driver does for one connection.
    enum Action: Equatable {
        /// Answer with ``MetricsHTTP/response(to:body:)`` of these bytes (a whole request head
        /// or one past the limit), then close.
        case answer(peer: [UInt8], request: [UInt8])
        /// Send these bytes (an error of the endpoint's own), then close.
        case reply(peer: [UInt8], bytes: [UInt8])
        /// Close without a word: over ``limit``.
        case close(peer: [UInt8])
    }

    static let limit = 64
    static let deadline: Duration = .seconds(10)

    private struct Connection {
        var opened: ContinuousClock.Instant
        var head: [UInt8] = []
        var answered = false
    }

    private var open: [[UInt8]: Connection] = [:]

    var count: Int { open.count }

    /// `[peer, bytes]` from the STREAM socket: an empty frame when a connection opens or its
    /// client closed it (libzmq's `ZMQ_STREAM_NOTIFY`), else what it sent.
    mutating func received(peer: [UInt8], bytes: [UInt8], now: ContinuousClock.Instant) -> Action? {
        guard !bytes.isEmpty else {
            if open.removeValue(forKey: peer) != nil { return nil }
            guard open.count < Self.limit else { return .close(peer: peer) }
            open[peer] = Connection(opened: now)
            return nil
        }
        // Bytes of a connection this side closed (over the limit, past the deadline) or already
        // answered (a pipelined request): nothing more is read from it.
        guard open[peer]?.answered == false else { return nil }
        let scanFrom = max(0, open[peer]!.head.count - 3)
        let room = MetricsHTTP.headLimit + 1 - open[peer]!.head.count
        open[peer]!.head += bytes.prefix(room)
        let head = open[peer]!.head
        guard MetricsHTTP.headEnd(head, from: scanFrom) != nil || head.count > MetricsHTTP.headLimit else { return nil }
        open[peer]!.answered = true
        open[peer]!.head = []
        return .answer(peer: peer, request: head)
    }

    /// Forgets a connection a send to failed (its client is gone).
    mutating func lost(peer: [UInt8]) {
        open[peer] = nil
    }

    /// At a tick: connections past their deadline, forgotten; those still without a whole
    /// request head are answered 408.
    mutating func expire(now: ContinuousClock.Instant) -> [Action] {
        guard !open.isEmpty else { return [] }
        var actions: [Action] = []
        for (peer, connection) in open where connection.opened + Self.deadline <= now {
            open[peer] = nil
            actions.append(connection.answered
                ? .close(peer: peer)
                : .reply(peer: peer, bytes: MetricsHTTP.timedOut))
        }
        return actions
    }
}
