import GroveClient
import GroveWire
import Testing

/// `ClientCore` with keyed retries: every event carries a key, resent with the same key after
/// `worker-lost`, `unavailable` or a timeout, a bounded number of times. No socket, no clock.
@Suite("Client core, keyed retries", .timeLimit(.minutes(2)))
struct ClientKeyedRetryTests {
    static let t0 = ContinuousClock.now
    static let event = Array(#""increment""#.utf8)
    static let client: [UInt8] = [0xC1, 0x1E]

    static func error(_ code: WireError.Code, to correlation: UInt64) -> [[UInt8]] {
        WireMessage(Header(.error, correlation: correlation), address: "counter/1", payload: WireError(code, "scripted").payload).frames
    }

    static func state(to correlation: UInt64) -> [[UInt8]] {
        WireMessage(Header(.state, correlation: correlation), address: "counter/1", payload: Array(#"{"count":1}"#.utf8)).frames
    }

    static func sent(_ action: ClientAction) -> WireMessage? {
        guard case .send(let message, _) = action else { return nil }
        return message
    }

    @Test func eventsCarryTheClientsKeyNumberedPerAddress() throws {
        var core = ClientCore(timeout: .seconds(1), retryUnavailable: false, keyedAttempts: 3, clientID: Self.client)
        let first = core.start(.event, address: "counter/1", payload: Self.event, flags: [], now: Self.t0)
        #expect(first.header.flags.contains(.keyed))
        let (key, body) = try IdempotencyKey.split(first.payload[...])
        #expect(key == IdempotencyKey(client: Self.client, sequence: 1))
        #expect(Array(body) == Self.event)
        _ = core.received(Self.state(to: 1), now: Self.t0)
        let second = core.start(.event, address: "counter/1", payload: Self.event, flags: [], now: Self.t0)
        #expect(try IdempotencyKey.split(second.payload[...]).key.sequence == 2)
        // Numbered per address: another address starts at 1.
        _ = core.received(Self.state(to: 2), now: Self.t0)
        let elsewhere = core.start(.event, address: "counter/2", payload: Self.event, flags: [], now: Self.t0)
        #expect(try IdempotencyKey.split(elsewhere.payload[...]).key.sequence == 1)
        // Reads carry none.
        #expect(!core.start(.get, address: "counter/1", payload: [], flags: [], now: Self.t0).header.flags.contains(.keyed))
    }

    @Test func aClientThatNumberedManyAddressesTakesANewIDInsteadOfGrowing() throws {
        var core = ClientCore(timeout: .seconds(1), retryUnavailable: false, keyedAttempts: 3, clientID: Self.client)
        func send(_ address: String) throws -> IdempotencyKey {
            let message = core.start(.event, address: address, payload: Self.event, flags: [], now: Self.t0)
            _ = core.received(Self.state(to: message.header.correlation), now: Self.t0)
            return try IdempotencyKey.split(message.payload[...]).key
        }
        #expect(try send("counter/0").sequence == 1)
        #expect(try send("counter/0").sequence == 2)
        for index in 1..<ClientCore.numberedAddresses { _ = try send("counter/\(index)") }
        #expect(core.nextSequence.count == ClientCore.numberedAddresses)
        // An address numbered already goes on under the same id.
        #expect(try send("counter/0") == IdempotencyKey(client: Self.client, sequence: 3))
        // One more address: a new id, every address at 1 again, no key of the old id reused.
        let next = try send("counter/new")
        #expect(next.client != Self.client && next.sequence == 1)
        #expect(core.nextSequence.count == 1)
        #expect(try send("counter/0") == IdempotencyKey(client: next.client, sequence: 1))
    }

    @Test func workerLostUnavailableAndATimeoutResendTheSameKeyUntilTheAttemptsRunOut() throws {
        var core = ClientCore(timeout: .seconds(1), retryUnavailable: false, keyedAttempts: 4, clientID: Self.client)
        let first = core.start(.event, address: "counter/1", payload: Self.event, flags: [], now: Self.t0)
        let second = try #require(Self.sent(core.received(Self.error(.workerLost, to: 1), now: Self.t0)))
        let third = try #require(Self.sent(core.received(Self.error(.unavailable, to: 2), now: Self.t0)))
        let fourth = try #require(Self.sent(core.timedOut(WireError(.timeout, "no reply"))))
        for copy in [second, third, fourth] {
            #expect(copy.payload == first.payload, "the same key and event")
            #expect(copy.header.flags == first.header.flags)
        }
        #expect([second, third, fourth].map(\.header.correlation) == [2, 3, 4])
        // The fourth send was the last: its worker-lost ends the request, saying so.
        guard case .fail(let error) = core.received(Self.error(.workerLost, to: 4), now: Self.t0) else {
            Issue.record("a fifth send")
            return
        }
        #expect(error.code == .workerLost)
        #expect(error.message.contains("after 4 sends with the same key"))
    }

    @Test func aLateAnswerToAnEarlierCopyIsTheAnswer() throws {
        var core = ClientCore(timeout: .seconds(1), retryUnavailable: false, keyedAttempts: 3, clientID: Self.client)
        _ = core.start(.event, address: "counter/1", payload: Self.event, flags: [], now: Self.t0)
        _ = try #require(Self.sent(core.timedOut(WireError(.timeout, "no reply"))))
        let late = Self.state(to: 1)
        #expect(core.received(late, now: Self.t0) == .reply(try WireMessage(frames: late)))
    }

    @Test func otherErrorsAndUnkeyedClientsAreNotResent() throws {
        var keyed = ClientCore(timeout: .seconds(1), retryUnavailable: false, keyedAttempts: 3, clientID: Self.client)
        _ = keyed.start(.event, address: "counter/1", payload: Self.event, flags: [], now: Self.t0)
        guard case .fail(let error) = keyed.received(Self.error(.invalidEvent, to: 1), now: Self.t0) else {
            Issue.record("invalid-event resent")
            return
        }
        #expect(error.code == .invalidEvent)

        var plain = ClientCore(timeout: .seconds(1), retryUnavailable: true)
        let message = plain.start(.event, address: "counter/1", payload: Self.event, flags: [], now: Self.t0)
        #expect(!message.header.flags.contains(.keyed) && message.payload == Self.event)
        guard case .fail = plain.received(Self.error(.workerLost, to: 1), now: Self.t0) else {
            Issue.record("an unkeyed event resent after worker-lost")
            return
        }
        _ = plain.start(.event, address: "counter/1", payload: Self.event, flags: [], now: Self.t0)
        guard case .fail = plain.timedOut(WireError(.timeout, "no reply")) else {
            Issue.record("an unkeyed event resent after a timeout")
            return
        }
    }
}
