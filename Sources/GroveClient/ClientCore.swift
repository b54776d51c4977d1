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
/// Only `unavailable` is ever resent, and only with `retryUnavailable`: the coordinator answers
/// it before forwarding anything, so the machine never saw the request. An event that reached
/// a machine is never sent twice.
package struct ClientCore: Sendable {
    /// The first pause before resending a request answered `unavailable`; it doubles up to
    /// ``maximumBackoff``.
    package static let initialBackoff = Duration.milliseconds(50)
    package static let maximumBackoff = Duration.milliseconds(500)

    /// How long a request answered `unavailable` is retried, from its first send.
    package let timeout: Duration
    package let retryUnavailable: Bool
    private var nextCorrelation: UInt64 = 1
    private var inFlight: InFlight?

    /// The request being answered: the copy last sent, and how its retries stand.
    private struct InFlight: Sendable {
        var message: WireMessage
        let deadline: ContinuousClock.Instant
        var backoff: Duration
        /// How many times it was sent, the copy in flight included.
        var requests: Int
    }

    package init(timeout: Duration, retryUnavailable: Bool) {
        self.timeout = timeout
        self.retryUnavailable = retryUnavailable
    }

    /// Starts a request and returns the message to send now. A request still in flight (its
    /// send or its wait failed in the driver) is given up: a reply to it is skipped as late.
    /// - Parameter now: When it is first sent; retries stop `timeout` after it.
    /// - Parameter trace: The client span's `traceparent`, carried by the request and its retries.
    package mutating func start(_ kind: MessageKind, address: String, payload: [UInt8], flags: Header.Flags,
                                now: ContinuousClock.Instant, trace: [UInt8]? = nil) -> WireMessage {
        let message = WireMessage(Header(kind, flags: flags, correlation: takeCorrelation()), address: address, payload: payload,
                                  trace: trace)
        inFlight = InFlight(message: message, deadline: now.advanced(by: timeout), backoff: Self.initialBackoff, requests: 1)
        return message
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
        guard var request = inFlight, reply.header.correlation == request.message.header.correlation else { return .receiveAgain }
        guard reply.header.kind == .error else {
            inFlight = nil
            return .reply(reply)
        }
        var error = (try? WireJSON.decode(WireError.self, from: reply.payload))
            ?? WireError(.malformedFrame, "an error reply that could not be decoded")
        error.correlation = reply.header.correlation
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
        let pause = min(request.backoff, request.deadline - now)
        request.backoff = min(request.backoff * 2, Self.maximumBackoff)
        request.requests += 1
        request.message.header.correlation = takeCorrelation()
        inFlight = request
        return .send(request.message, after: pause)
    }

    private mutating func takeCorrelation() -> UInt64 {
        defer { nextCorrelation += 1 }
        return nextCorrelation
    }
}
