import GroveCluster
import GroveClient
import GroveCoordinator
import GroveWorker
import GroveWire
import Testing

/// An arbitrary origin; every instant below is an explicit offset from it.
private let t0 = ContinuousClock.now
private let event = Array(#""increment""#.utf8)

/// The frames a coordinator's reply of `kind` to `correlation` arrives as.
private func reply(_ kind: MessageKind, to correlation: UInt64, payload: [UInt8] = Array("{}".utf8)) -> [[UInt8]] {
    WireMessage(Header(kind, correlation: correlation), address: "counter/1", payload: payload).frames
}

private func error(_ code: WireError.Code, to correlation: UInt64) -> [[UInt8]] {
    reply(.error, to: correlation, payload: WireError(code, "scripted \(code.rawValue)").payload)
}

private func failure(_ action: ClientAction) -> WireError? {
    guard case .fail(let error) = action else { return nil }
    return error
}

/// The rules of `Client` (Client.swift only moves bytes and sleeps): correlations, what a reply
/// means, and when an `unavailable` is sent again. No socket, no thread, no clock.
@Suite("Client core", .timeLimit(.minutes(2)))
struct ClientCoreTests {
    @Test func eachRequestGoesUnderANewCorrelationAndItsReplyEndsIt() {
        var core = ClientCore(timeout: .seconds(5), retryUnavailable: false)
        let first = core.start(.event, address: "counter/1", payload: event, flags: .noWait, now: t0)
        #expect(first.header == Header(.event, flags: .noWait, correlation: 1))
        #expect(first.address == "counter/1" && first.payload == event)
        let answer = reply(.accepted, to: 1)
        #expect(core.received(answer, now: t0) == .reply(try! WireMessage(frames: answer)))
        #expect(core.start(.get, address: "counter/1", payload: [], flags: [], now: t0).header.correlation == 2)
    }

    /// A reply to a request whose wait ran out (the driver threw `timeout`) comes in while the
    /// next request waits: skipped, and the next request's own reply still ends it.
    @Test func aLateReplyToAnEarlierRequestIsSkipped() {
        var core = ClientCore(timeout: .seconds(5), retryUnavailable: true)
        _ = core.start(.event, address: "counter/1", payload: event, flags: [], now: t0)
        _ = core.start(.event, address: "counter/1", payload: event, flags: [], now: t0 + .seconds(5))
        #expect(core.received(reply(.state, to: 1), now: t0 + .seconds(6)) == .receiveAgain)
        #expect(core.received(error(.busy, to: 1), now: t0 + .seconds(6)) == .receiveAgain, "not even an error")
        let own = reply(.state, to: 2, payload: Array(#"{"count":2}"#.utf8))
        #expect(core.received(own, now: t0 + .seconds(6)) == .reply(try! WireMessage(frames: own)))
        #expect(core.received(reply(.state, to: 2), now: t0 + .seconds(6)) == .receiveAgain, "nothing is in flight any more")
    }

    @Test func anErrorReplyIsItsWireErrorWithTheCorrelation() throws {
        var core = ClientCore(timeout: .seconds(5), retryUnavailable: false)
        _ = core.start(.stop, address: "counter/1", payload: [], flags: [], now: t0)
        let error = try #require(failure(core.received(error(.machineEnded, to: 1), now: t0)))
        #expect(error.code == .machineEnded)
        #expect(error.message == "scripted machine-ended")
        #expect(error.correlation == 1)
    }

    @Test func anUndecodableErrorReplyIsAMalformedFrame() throws {
        var core = ClientCore(timeout: .seconds(5), retryUnavailable: true)
        _ = core.start(.event, address: "counter/1", payload: event, flags: [], now: t0)
        let error = try #require(failure(core.received(reply(.error, to: 1, payload: Array("not json".utf8)), now: t0)))
        #expect(error.code == .malformedFrame)
        #expect(error.message == "an error reply that could not be decoded")
        #expect(error.correlation == 1)
    }

    @Test func framesThatAreNoMessageEndTheRequest() throws {
        var core = ClientCore(timeout: .seconds(5), retryUnavailable: true)
        _ = core.start(.event, address: "counter/1", payload: event, flags: [], now: t0)
        let twoFrames = Array(reply(.state, to: 1).prefix(2))
        let error = try #require(failure(core.received(twoFrames, now: t0)))
        #expect(error.code == .malformedFrame)
        #expect(error.message.contains("has 2 frames"), "\(error.message)")
    }

    /// Answered `unavailable` at once each time: the pauses double from 50 ms to 500 ms, and each
    /// copy goes under a correlation of its own, its payload and flags unchanged.
    @Test func unavailableIsResentAfterABackoffThatDoublesTo500Milliseconds() throws {
        var core = ClientCore(timeout: .seconds(10), retryUnavailable: true)
        var now = t0
        var correlation = core.start(.event, address: "counter/1", payload: event, flags: .noWait, now: now).header.correlation
        var pauses: [Duration] = []
        for _ in 0..<7 {
            guard case .send(let message, let pause) = core.received(error(.unavailable, to: correlation), now: now) else {
                Issue.record("an unavailable within the timeout was not resent")
                return
            }
            #expect(message.header == Header(.event, flags: .noWait, correlation: correlation + 1))
            #expect(message.address == "counter/1" && message.payload == event)
            pauses.append(pause)
            correlation = message.header.correlation
            now += pause
        }
        #expect(pauses == [50, 100, 200, 400, 500, 500, 500].map(Duration.milliseconds))
        let answer = reply(.state, to: correlation)
        #expect(core.received(answer, now: now) == .reply(try! WireMessage(frames: answer)))
    }

    /// With a timeout of 300 ms: 50, 100, then only the 150 ms left, so the last copy goes at the
    /// deadline; its `unavailable` ends the request, saying how many were sent and for how long.
    @Test func retriesStopAtTheDeadlineWithTheExactMessage() throws {
        var core = ClientCore(timeout: .milliseconds(300), retryUnavailable: true)
        var now = t0
        _ = core.start(.event, address: "counter/1", payload: event, flags: [], now: now)
        var action = core.received(error(.unavailable, to: 1), now: now)
        var pauses: [Duration] = []
        while case .send(let message, let pause) = action {
            pauses.append(pause)
            now += pause
            action = core.received(error(.unavailable, to: message.header.correlation), now: now)
        }
        #expect(pauses == [.milliseconds(50), .milliseconds(100), .milliseconds(150)])
        #expect(now == t0 + .milliseconds(300))
        let error = try #require(failure(action))
        #expect(error.code == .unavailable)
        #expect(error.message == "scripted unavailable (still unavailable after retrying for 0.3 seconds: 4 requests)")
        #expect(error.correlation == 4)
    }

    /// Answers that come late (a slow coordinator) eat the time: a pause never reaches past the
    /// deadline, however much backoff is left.
    @Test func aPauseIsCutAtTheDeadline() {
        var core = ClientCore(timeout: .seconds(1), retryUnavailable: true)
        _ = core.start(.event, address: "counter/1", payload: event, flags: [], now: t0)
        #expect(core.received(error(.unavailable, to: 1), now: t0 + .milliseconds(990))
                == .send(WireMessage(Header(.event, correlation: 2), address: "counter/1", payload: event), after: .milliseconds(10)))
    }

    /// The first answer already came after the timeout: thrown as it came, nothing was retried.
    @Test func anUnavailableAfterTheDeadlineOnTheFirstRequestIsThrownAsItCame() throws {
        var core = ClientCore(timeout: .seconds(1), retryUnavailable: true)
        _ = core.start(.event, address: "counter/1", payload: event, flags: [], now: t0)
        let error = try #require(failure(core.received(error(.unavailable, to: 1), now: t0 + .seconds(1))))
        #expect(error.code == .unavailable)
        #expect(error.message == "scripted unavailable")
    }

    @Test func withoutRetryUnavailableItIsThrownAtOnce() throws {
        var core = ClientCore(timeout: .seconds(10), retryUnavailable: false)
        _ = core.start(.event, address: "counter/1", payload: event, flags: [], now: t0)
        let error = try #require(failure(core.received(error(.unavailable, to: 1), now: t0)))
        #expect(error.code == .unavailable)
        #expect(error.message == "scripted unavailable")
    }

    /// Every other code may come from a machine that saw the event (or from a refusal that a
    /// resend would only repeat): never sent twice, however much time is left.
    @Test(arguments: [WireError.Code.malformedFrame, .unsupportedVersion, .unknownKind, .oversized, .malformedJSON, .unknownMachine,
                      .undecodableEvent, .invalidEvent, .unencodableState, .workerLost, .busy, .replyDropped, .replyTooLarge,
                      .publicationTooLarge, .mailboxFull, .machineEnded, .forbidden, .quarantined, .unknownDeadLetter,
                      .unknownPoison, .registrationRejected, .superseded, .timeout, .unreachable, .invalidEndpoint,
                      .untrustedEndpoint])
    func noOtherErrorIsResent(code: WireError.Code) throws {
        var core = ClientCore(timeout: .seconds(10), retryUnavailable: true)
        _ = core.start(.event, address: "counter/1", payload: event, flags: [], now: t0)
        let error = try #require(failure(core.received(error(code, to: 1), now: t0)))
        #expect(error.code == code)
        #expect(error.message == "scripted \(code.rawValue)")
    }
}
