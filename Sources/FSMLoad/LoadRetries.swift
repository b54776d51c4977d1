import GroveWire

/// `fsm-load --retry`: every event carries an idempotency key (the connection's client id and
/// the event's sequence), and one answered `worker-lost`, `unavailable` or `busy` (on a direct
/// leg also `moved`), or not answered within ``timeout``, is sent again with the same key under
/// a new correlation, up to
/// ``maximumCopies`` sends, after a pause of 100 ms doubling to 2 s. The worker answers a key it
/// applied already with its first answer, so an event counts once however often it went.
///
/// At most ``IdempotencyKey/openRunsKept`` events per address are unanswered at once (in flight
/// or due again): each not applied yet may be a hole under newer events its instance applied,
/// and past that many holes per client the instance gives up the oldest, refusing its copies
/// `key-too-old` though they never ran. With the whole window on one address, under
/// backpressure (copies refused `busy` among those forwarded), 5,227 of 11,984 events were.
struct LoadRetries {
    /// One event's key and where it goes, and how often it was sent.
    struct Attempt {
        var sequence: UInt64
        var address: Int
        var copies: Int
        /// When its last copy left, in nanoseconds since the run started.
        var sentAt: Int64
    }

    static let maximumCopies = 12
    static let timeout = Duration.seconds(3)
    static let retried: Set<WireError.Code> = [.workerLost, .unavailable, .busy]
    /// On a direct leg, `moved` too: the worker answers it before the event reaches a machine,
    /// so the copy the leg resends through the coordinator applies it once.
    static let retriedDirect: Set<WireError.Code> = retried.union([.moved])

    /// The codes whose answer sends the event again.
    let retriedCodes: Set<WireError.Code>

    let client = IdempotencyKey.randomClient()
    /// The next sequence for each address (by its index): numbered 1, 2, 3… per address, so a
    /// worker remembers what it applied of this client in a few words (``IdempotencyKey``).
    private var nextSequence: [UInt64]
    /// The copy in flight of each event, by its correlation.
    private(set) var inFlight: [UInt64: Attempt] = [:]
    /// Events waiting to be sent again, with when (nanoseconds since the run started).
    private(set) var due: [(at: Int64, attempt: Attempt)] = []
    /// Copies sent again, over the run.
    private(set) var resent = 0
    /// The events of each address (by its index) not answered yet, nor given up.
    private var unanswered: [Int]

    /// For a run over `addresses` addresses; `direct` for a leg straight to a worker.
    init(addresses: Int, direct: Bool = false) {
        retriedCodes = direct ? Self.retriedDirect : Self.retried
        nextSequence = Array(repeating: 1, count: addresses)
        unanswered = Array(repeating: 0, count: addresses)
    }

    /// Whether a new event may go to `address`: fewer than ``IdempotencyKey/openRunsKept`` of
    /// its events are unanswered.
    func mayStart(address: Int) -> Bool {
        unanswered[address] < IdempotencyKey.openRunsKept
    }

    /// The payload of a new event to `address`, sent under `correlation` at `now`.
    mutating func first(_ payload: UnsafeBufferPointer<UInt8>, address: Int, correlation: UInt64, now: Int64) -> [UInt8] {
        let attempt = Attempt(sequence: nextSequence[address], address: address, copies: 1, sentAt: now)
        nextSequence[address] += 1
        unanswered[address] += 1
        inFlight[correlation] = attempt
        return keyed(payload, attempt)
    }

    func keyed(_ payload: UnsafeBufferPointer<UInt8>, _ attempt: Attempt) -> [UInt8] {
        IdempotencyKey(client: client, sequence: attempt.sequence).prefixed(payload)
    }

    /// The answer to `correlation` arrived: true when it ends its event (an answer, or an error
    /// not retried, or the last copy's), false when the event will be sent again.
    mutating func answered(_ correlation: UInt64, error: WireError.Code?, now: Int64) -> Bool {
        guard let attempt = inFlight.removeValue(forKey: correlation) else { return true }
        guard let error, retriedCodes.contains(error), attempt.copies < Self.maximumCopies else {
            unanswered[attempt.address] -= 1
            return true
        }
        due.append((now + Self.pause(after: attempt.copies).nanoseconds, attempt))
        return false
    }

    /// The copies in flight longer than ``timeout`` at `now`: taken out (their correlations, for
    /// the caller to forget, with their addresses' indices) and due again at once, or given up
    /// after the last copy.
    mutating func timedOut(now: Int64) -> (retried: [(correlation: UInt64, address: Int)], givenUp: [UInt64]) {
        let limit = Self.timeout.nanoseconds
        var retried: [(correlation: UInt64, address: Int)] = [], givenUp: [UInt64] = []
        for (correlation, attempt) in inFlight where now - attempt.sentAt > limit {
            inFlight[correlation] = nil
            if attempt.copies < Self.maximumCopies {
                due.append((now, attempt))
                retried.append((correlation, attempt.address))
            } else {
                // Its hole stays at the instance, the oldest, the first given up there.
                unanswered[attempt.address] -= 1
                givenUp.append(correlation)
            }
        }
        return (retried, givenUp)
    }

    /// Takes the events due again by `now`, each with its next copy's count, for the caller to
    /// send under new correlations (``sentAgain(_:correlation:now:)``).
    mutating func takeDue(now: Int64, atMost limit: Int) -> [Attempt] {
        var taken: [Attempt] = []
        due.removeAll { entry in
            guard entry.at <= now, taken.count < limit else { return false }
            taken.append(entry.attempt)
            return true
        }
        return taken
    }

    mutating func sentAgain(_ attempt: Attempt, correlation: UInt64, now: Int64) {
        var attempt = attempt
        attempt.copies += 1
        attempt.sentAt = now
        inFlight[correlation] = attempt
        resent += 1
    }

    /// Puts back an event whose copy could not leave (no room on the socket).
    mutating func notSent(_ attempt: Attempt, now: Int64) {
        due.append((now, attempt))
    }

    var isIdle: Bool { due.isEmpty }

    static func pause(after copies: Int) -> Duration {
        min(.milliseconds(100) * (1 << min(copies - 1, 5)), .seconds(2))
    }
}
