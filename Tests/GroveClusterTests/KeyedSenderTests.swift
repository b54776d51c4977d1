import Foundation
@testable import GroveCluster
@testable import GroveCoordinator
@testable import GroveWorker
@_spi(GroveInternal) import GroveWire
import Testing

/// Idempotency keys tied to their sender (issue 34): another client key that learns a client's
/// id and sequence and sends its own event under them first gets a key of its own, so the real
/// client's event is still applied, once, and answered with its own answer. The worker's
/// window decides on bound keys; the coordinator refuses a key a client may not send before
/// it binds one; the direct road binds as the coordinator does.
@Suite(.timeLimit(.minutes(2)))
struct KeyedSenderTests {
    typealias Window = AnswerWindow<String>
    static let alice = Array(String(repeating: "A", count: IdempotencyKey.senderLength).utf8)
    static let mallory = Array(String(repeating: "M", count: IdempotencyKey.senderLength).utf8)
    static let client = Array(repeating: UInt8(0x5A), count: 16)

    /// The key a worker reads once the event's key was bound to `sender`.
    static func key(_ sequence: UInt64, from sender: [UInt8]) throws -> IdempotencyKey {
        var bound: [UInt8] = []
        try IdempotencyKey.appendBound(IdempotencyKey(client: client, sequence: sequence).prefixed([UInt8]()), to: sender, into: &bound)
        return try IdempotencyKey.split(bound[...], longest: IdempotencyKey.maximumBoundClientLength).key
    }

    static func state(_ text: String) -> KeptAnswer { KeptAnswer(kind: .state, payload: Array(text.utf8)) }

    /// The forger's event runs first, under its own key; the real client's event with the same id
    /// and sequence is then applied (not answered with the forger's answer, nor `already-applied`),
    /// and its repeats get its own answer, also once the forger's key has left the window.
    @Test func aForgedIdAndSequenceFromAnotherSenderNeitherAnswersNorStopsTheRealEvent() throws {
        var window = Window()
        let forged = try Self.key(1, from: Self.mallory), real = try Self.key(1, from: Self.alice)
        guard case .apply = window.admit(forged, waiter: "mallory") else { Issue.record("the forger's event runs as its own"); return }
        #expect(window.answered(forged, with: Self.state(#"{"count":100}"#)) == [])
        guard case .apply = window.admit(real, waiter: "alice") else {
            Issue.record("the real client's event must be applied, not answered with the forger's answer"); return
        }
        #expect(window.answered(real, with: Self.state(#"{"count":101}"#)) == [])
        guard case .answer(let repeated) = window.admit(real, waiter: "alice-retry") else { Issue.record("a repeat is answered"); return }
        #expect(repeated == Self.state(#"{"count":101}"#), "its own answer")
        guard case .answer(let forgerRepeat) = window.admit(forged, waiter: "mallory-retry") else { Issue.record("answered"); return }
        #expect(forgerRepeat == Self.state(#"{"count":100}"#), "the forger gets only its own answer")

        // Past the answers kept, each sender's sequences still tell its own repeats apart.
        for sequence in 2...UInt64(Window.capacity + 1) {
            let other = try Self.key(sequence, from: Self.mallory)
            _ = window.admit(other, waiter: "")
            _ = window.answered(other, with: Self.state("\(sequence)"))
        }
        guard case .appliedEarlier = window.admit(real, waiter: "late") else { Issue.record("applied once, refused now"); return }
        guard case .apply = window.admit(try Self.key(2, from: Self.alice), waiter: "next") else {
            Issue.record("the forger's sequence 2 is not the real client's"); return
        }
    }

    /// The kept answers come back from a store under the bound ids (a relaunch, a handoff: the
    /// record read by another worker), so the real client is told apart after them too.
    @Test func boundKeysRestoredFromAStoreKeepTheirSenders() throws {
        var first = Window()
        let real = try Self.key(1, from: Self.alice)
        _ = first.admit(real, waiter: "alice")
        _ = first.answered(real, with: Self.state("1"))
        let written = first.takeWrites(replacingStored: true).answers
        #expect(written.allSatisfy { $0.key.client.starts(with: Self.alice) })
        var adopted = Window()
        adopted.restore(written)
        guard case .answer = adopted.admit(real, waiter: "retry") else { Issue.record("the same sender's repeat is answered"); return }
        guard case .apply = adopted.admit(try Self.key(1, from: Self.mallory), waiter: "forger") else {
            Issue.record("another sender's same id and sequence is its own key"); return
        }
    }

    /// The coordinator reads the key of a keyed event before it forwards it: one a client may not
    /// send (a client id past 64 bytes, which a bound id may be) is refused there, `malformed-frame`
    /// under the request's correlation, and never reaches a worker.
    @Test func theCoordinatorRefusesAKeyAClientMayNotSendAndForwardsAGoodOneAsItCame() throws {
        let cluster = InMemoryCluster()
        cluster.registerAll()
        let tooLong = [UInt8(IdempotencyKey.maximumClientLength + 1)] + Array(repeating: 1, count: 65) + [0, 0, 0, 0, 0, 0, 0, 1]
            + Array(#""increment""#.utf8)
        cluster.fromClient("c", WireMessage(Header(.event, flags: .keyed, correlation: 5), address: "auth", payload: tooLong))
        let refusal = try #require(cluster.toClient("c").first)
        #expect(refusal.header.correlation == 5)
        #expect(refusal.header.kind == .error)
        let error = try payload(WireError.self, of: refusal)
        #expect(error.code == .malformedFrame && error.message.contains("length byte says 65"), "\(error)")
        #expect(cluster.requests(to: "edge").isEmpty, "nothing forwarded")

        // Without CURVE every client is the same trusted sender: its key goes as it came.
        let good = IdempotencyKey(client: Self.client, sequence: 1).prefixed(Array(#""startLogin""#.utf8))
        cluster.fromClient("c", WireMessage(Header(.event, flags: .keyed, correlation: 6), address: "auth", payload: good))
        #expect(try #require(cluster.requests(to: "edge").first).payload == good)
    }

    /// What the driver forwards for a CURVE client (``MessageView/append(to:correlation:trace:sender:)``):
    /// the key bound to the client's key, with or without a trace context; a request that is
    /// not a keyed event goes as it came.
    @Test func theForwardedKeyIsBoundToTheClientsKey() throws {
        let keyed = IdempotencyKey(client: Self.client, sequence: 9).prefixed(Array(#""increment""#.utf8))
        func forwarded(_ message: WireMessage) throws -> WireMessage {
            var batch = BatchBuilder()
            MessageView.with(message) { $0.append(to: &batch, correlation: 77, sender: Self.alice) }
            return try WireMessage(frames: batch.frames())
        }
        let plain = try forwarded(WireMessage(Header(.event, flags: .keyed, correlation: 1), address: "counter/a", payload: keyed))
        #expect(plain.header.correlation == 77)
        #expect(try IdempotencyKey.split(plain.payload[...], longest: IdempotencyKey.maximumBoundClientLength).key
                == IdempotencyKey(client: Self.alice + Self.client, sequence: 9))

        var traced = WireMessage(Header(.event, flags: .keyed, correlation: 2), address: "counter/a", payload: keyed)
        traced.trace = Array("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01".utf8)
        let withTrace = try forwarded(traced)
        #expect(withTrace.trace == traced.trace)
        #expect(try IdempotencyKey.split(withTrace.payload[...], longest: IdempotencyKey.maximumBoundClientLength).key.client
                == Self.alice + Self.client)

        let get = WireMessage(Header(.get, correlation: 3), address: "counter/a")
        #expect(try forwarded(get).payload == [])
    }

    /// The direct road binds as the coordinator does, from the connection's `User-Id`: a key's
    /// client id behind its Z85 text; a trusted peer's kept as sent once checked; a key a client
    /// may not send refused.
    @Test func theDirectRoadBindsToTheConnectionsKey() throws {
        let keyed = IdempotencyKey(client: Self.client, sequence: 4).prefixed(Array(#""increment""#.utf8))
        let header = Header(.event, flags: .keyed, correlation: 8)
        let userID = String(decoding: Self.alice, as: UTF8.self) + " 127.0.0.1"
        let bound = try WorkerRuntime.boundToSender(keyed[...], header, userID: userID)
        #expect(try IdempotencyKey.split(bound, longest: IdempotencyKey.maximumBoundClientLength).key.client == Self.alice + Self.client)
        #expect(Array(try WorkerRuntime.boundToSender(keyed[...], header, userID: Gatekeeper.trustedUser)) == keyed)
        // An envelope of a batch is a slice that does not start at 0.
        let envelope = ([9, 9, 9] + keyed)[3...]
        #expect(Array(try WorkerRuntime.boundToSender(envelope, header, userID: userID)) == Array(bound))
        #expect(Array(try WorkerRuntime.boundToSender(envelope, header, userID: Gatekeeper.trustedUser)) == keyed)
        #expect(Array(try WorkerRuntime.boundToSender(keyed[...], Header(.get, correlation: 8), userID: userID)) == keyed)
        let tooLong = [UInt8(65)] + Array(repeating: 1, count: 73)
        #expect(throws: WireError.self) { try WorkerRuntime.boundToSender(tooLong[...], header, userID: Gatekeeper.trustedUser) }
        #expect(throws: WireError.self) { try WorkerRuntime.boundToSender(tooLong[...], header, userID: userID) }
    }
}
