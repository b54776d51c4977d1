package import GroveWire

/// What ``Client`` does next for its request in flight; produced by ``ClientCore``.
package enum ClientAction: Sendable, Equatable {
    /// Receive again: the frames were a late reply to an earlier request (one whose wait ran
    /// out), which nothing waits for any more.
    case receiveAgain
    /// Pause for `after`, then send `message`: the request again, under a new correlation,
    /// because it was answered `unavailable`.
    case send(WireMessage, after: Duration)
    /// The request is over: return this reply (`state`, `accepted`, `listing`, ...).
    case reply(WireMessage)
    /// The request is over: throw this error (an `error` reply, or frames that are no message).
    case fail(WireError)
}

/// The client's rules as a pure value: which correlation a request goes under, what a received
/// reply means, and whether a request answered `unavailable` is sent again and after how long.
/// No socket and no clock of its own: instants come in as arguments, pauses go out as
/// ``ClientAction/send(_:after:)``, so every rule is unit-tested with made-up instants.
/// ``Client`` only moves the bytes and sleeps.
///
/// Without keys, only `unavailable` is resent, and only with `retryUnavailable`: the
/// coordinator answers it before forwarding anything, so the machine never saw the request.
/// With `keyedAttempts` above 1, every event carries an idempotency key (``IdempotencyKey``:
/// this core's client id and its next sequence) and is resent with the same key when answered
/// `worker-lost` or `unavailable`, or not answered within the timeout (``timedOut(_:)``), up
/// to that many sends: the worker answers a key it applied already with its first answer, so a
/// resent event never applies twice.
package struct ClientCore: Sendable {
    /// The first pause before resending a request answered `unavailable`; it doubles up to
    /// ``maximumBackoff``.
    package static let initialBackoff = Duration.milliseconds(50)
    package static let maximumBackoff = Duration.milliseconds(500)

    /// How long a request answered `unavailable` is retried, from its first send.
    package let timeout: Duration
    package let retryUnavailable: Bool
    /// How many times a keyed event may be sent, the first included; 1: events carry no key.
    package let keyedAttempts: Int
    /// The id this client's keys carry: a new random one once ``numberedAddresses`` addresses
    /// are numbered (the first one given, then random).
    package private(set) var clientID: [UInt8]
    /// How many addresses a client id numbers before the client takes a new one: what bounds
    /// ``nextSequence`` however many keyed instances a long-lived client sends to.
    package static let numberedAddresses = 100_000
    private var nextCorrelation: UInt64 = 1
    /// The next sequence of each address this client sent keyed events to: numbered 1, 2, 3…
    /// per address, so a worker remembers what it applied of this client in a few words
    /// (``IdempotencyKey``). One entry per address, at most ``numberedAddresses``: a new client id
    /// starts every address at 1 again without reusing a key (forgetting an address's number
    /// under the same id would, and its next event would get an earlier one's answer).
    package private(set) var nextSequence: [String: UInt64] = [:]
    private var inFlight: InFlight?

    /// The request being answered: the copy last sent, and how its retries stand.
    private struct InFlight: Sendable {
        var message: WireMessage
        let deadline: ContinuousClock.Instant
        var backoff: Duration
        /// How many times it was sent, the copy in flight included.
        var requests: Int
        /// Whether it carries a key, so it may be resent after `worker-lost` or a timeout.
        let keyed: Bool
        /// The correlations of every copy sent: a late answer to an earlier copy is the answer.
        var correlations: [UInt64]
    }

    /// The pause before resending a keyed event starts here and doubles up to
    /// ``maximumKeyedBackoff``: a worker killed mid-request is back after its supervisor's backoff.
    package static let maximumKeyedBackoff = Duration.seconds(2)

    package init(timeout: Duration, retryUnavailable: Bool, keyedAttempts: Int = 1, clientID: [UInt8] = IdempotencyKey.randomClient()) {
        self.timeout = timeout
        self.retryUnavailable = retryUnavailable
        self.keyedAttempts = max(1, keyedAttempts)
        self.clientID = clientID
    }

    /// Starts a request and returns the message to send now. A request still in flight (its
    /// send or its wait failed in the driver) is given up: a reply to it is skipped as late.
    /// - Parameter now: When it is first sent; retries stop `timeout` after it.
    /// - Parameter trace: The client span's `traceparent`, carried by the request and its retries.
    package mutating func start(_ kind: MessageKind, address: String, payload: [UInt8], flags: Header.Flags,
                                now: ContinuousClock.Instant, trace: [UInt8]? = nil) -> WireMessage {
        let keyed = kind == .event && keyedAttempts > 1
        var flags = flags, payload = payload
        if keyed {
            if nextSequence[address] == nil, nextSequence.count >= Self.numberedAddresses {
                clientID = IdempotencyKey.randomClient()
                nextSequence = [:]
            }
            let sequence = nextSequence[address, default: 1]
            payload = IdempotencyKey(client: clientID, sequence: sequence).prefixed(payload)
            nextSequence[address] = sequence + 1
            flags.insert(.keyed)
        }
        let message = WireMessage(Header(kind, flags: flags, correlation: takeCorrelation()), address: address, payload: payload,
                                  trace: trace)
        inFlight = InFlight(message: message, deadline: now.advanced(by: timeout), backoff: Self.initialBackoff, requests: 1,
                            keyed: keyed, correlations: [message.header.correlation])
        return message
    }

    /// The wait for the request in flight ran out with `error`: ``ClientAction/send(_:after:)``
    /// again for a keyed event with sends left, else ``ClientAction/fail(_:)``.
    package mutating func timedOut(_ error: WireError) -> ClientAction {
        guard var request = inFlight else { return .fail(error) }
        guard request.keyed, request.requests < keyedAttempts else {
            inFlight = nil
            var error = error
            if request.requests > 1 { error.message += " (after \(request.requests) sends with the same key)" }
            return .fail(error)
        }
        return resend(&request, after: request.backoff)
    }

    /// Sends `request` again, same payload (and key), new correlation, after `pause`.
    private mutating func resend(_ request: inout InFlight, after pause: Duration) -> ClientAction {
        request.backoff = min(request.backoff * 2, request.keyed ? Self.maximumKeyedBackoff : Self.maximumBackoff)
        request.requests += 1
        request.message.header.correlation = takeCorrelation()
        request.correlations.append(request.message.header.correlation)
        inFlight = request
        return .send(request.message, after: pause)
    }

    /// What the frames a DEALER received (no routing id) mean for the request in flight.
    /// - Parameter now: When they arrived; decides whether an `unavailable` is retried.
    package mutating func received(_ frames: [[UInt8]], now: ContinuousClock.Instant) -> ClientAction {
        let reply: WireMessage
        do {
            reply = try WireMessage(frames: frames)
        } catch {
            inFlight = nil
            return .fail(error)
        }
        // With nothing in flight, every reply is late: nothing waits for it.
        guard var request = inFlight, request.correlations.contains(reply.header.correlation) else { return .receiveAgain }
        guard reply.header.kind == .error else {
            inFlight = nil
            return .reply(reply)
        }
        var error = (try? WireJSON.decode(WireError.self, from: reply.payload))
            ?? WireError(.malformedFrame, "an error reply that could not be decoded")
        error.correlation = reply.header.correlation
        // `unavailable` within the deadline goes the unkeyed way when it is retried: a worker
        // restarting may take longer than a few keyed attempts would wait.
        let unavailableRetried = error.code == .unavailable && retryUnavailable && now < request.deadline
        if request.keyed, error.code == .workerLost || (error.code == .unavailable && !unavailableRetried) {
            guard request.requests < keyedAttempts else {
                inFlight = nil
                error.message += " (after \(request.requests) sends with the same key)"
                return .fail(error)
            }
            return resend(&request, after: request.backoff)
        }
        guard retryUnavailable, error.code == .unavailable else {
            inFlight = nil
            return .fail(error)
        }
        guard now < request.deadline else {
            inFlight = nil
            if request.requests > 1 {
                error.message += " (still unavailable after retrying for \(timeout): \(request.requests) requests)"
            }
            return .fail(error)
        }
        // Never past the deadline: the last copy goes at it, and its `unavailable` ends the request.
        return resend(&request, after: min(request.backoff, request.deadline - now))
    }

    private mutating func takeCorrelation() -> UInt64 {
        defer { nextCorrelation += 1 }
        return nextCorrelation
    }
}
