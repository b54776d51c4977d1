import Foundation
import Grove
import GroveRuntime
import GroveTesting
import Testing

/// A machine that waits 10 s in `waiting` for an answer, with a state timeout.
private enum Waiter: StateScoped {
    enum State: Equatable, Sendable, Codable { case idle, waiting, answered, gaveUp }
    enum Event: Equatable, Sendable, Codable { case ask, answer, tooLate }
    static var initialState: State { .idle }
    static func update(_ state: inout State, event: Event) -> Effect {
        switch (state, event) {
        case (.idle, .ask):
            state = .waiting
            return .stateTimeout(after: .seconds(10), send: .tooLate)
        case (.waiting, .answer):
            state = .answered
            return .none
        // From answered too, so that a timeout that fires after the answer would show.
        case (.waiting, .tooLate), (.answered, .tooLate):
            state = .gaveUp
            return .none
        case (.idle, .answer), (.idle, .tooLate), (.waiting, .ask), (.answered, .ask), (.answered, .answer), (.gaveUp, _):
            return .unhandled
        }
    }
}

/// A talk that hangs up after 30 s without a word (an event timeout); `sayAndRing` also arms a
/// named timer due in 20 s, whose event (handled, changing nothing) ends the event timeout.
private enum Talk: Machine {
    enum State: Equatable, Sendable, Codable { case talking(words: Int), hungUp }
    enum Event: Equatable, Sendable, Codable { case say, sayAndRing, nod, ring, silence }
    static var initialState: State { .talking(words: 0) }
    static func update(_ state: inout State, event: Event) -> Effect {
        switch (state, event) {
        case (.talking(let words), .say):
            state = .talking(words: words + 1)
            return .eventTimeout(after: .seconds(30), send: .silence)
        case (.talking(let words), .sayAndRing):
            state = .talking(words: words + 1)
            return .merge([.eventTimeout(after: .seconds(30), send: .silence), .after(.seconds(20), id: "ring", send: .ring)])
        case (.talking, .nod), (.talking, .ring):
            return .none
        case (.talking, .silence):
            state = .hungUp
            return .none
        case (.hungUp, _):
            return .unhandled
        }
    }
}

/// A clock whose time stands still and that fires a timer due by then at once, as it is armed:
/// a restored timer already due is in the mailbox behind the restored queued events.
private final class DueNowClock: HostClock {
    let fixedNow: Timestamp
    init(now: Timestamp) { fixedNow = now }
    func now() -> Timestamp { fixedNow }
    func schedule(at deadline: Timestamp, _ action: @escaping @Sendable () -> Void) -> any ScheduledTimer {
        if deadline <= fixedNow { action() }
        return NeverFires()
    }
    private struct NeverFires: ScheduledTimer { func cancel() {} }
}

/// State timeouts are timers under a reserved id, so a durable restart carries them as it
/// carries every timer: at their original deadline, and still tied to the state.
@Suite("State timeouts across a snapshot", .timeLimit(.minutes(2)))
struct StateTimeoutSnapshotTests {
    /// The snapshot, through JSON as a record on disk, of a `Waiter` that asked at `clock`'s now.
    private func askedAndSnapshotted(_ clock: TestClock) async throws -> Snapshot<Waiter> {
        let original = MachineHost(Waiter.self, clock: clock)
        original.start()
        _ = try await original.sendAndWait(.ask)
        let snapshot = await original.snapshot()
        await original.stop()
        return try JSONDecoder().decode(Snapshot<Waiter>.self, from: JSONEncoder().encode(snapshot))
    }

    @Test("A restored state timeout fires at its original deadline")
    func restoredStateTimeoutKeepsItsDeadline() async throws {
        let clock = TestClock()
        let snapshot = try await askedAndSnapshotted(clock)
        #expect(snapshot.timers.map(\.id) == [.stateTimeout])
        #expect(snapshot.timers.first?.deadline == clock.now() + .seconds(10))

        await clock.advance(by: .seconds(4))
        let restored = MachineHost(restoring: snapshot, clock: clock)
        restored.start()
        await restored.flush()
        await clock.advance(by: .seconds(5)) { await restored.flush() }
        #expect(await restored.state == .waiting, "9 s after asking, the 10 s timeout has not fired")
        await clock.advance(by: .seconds(1)) { await restored.flush() }
        #expect(await restored.state == .gaveUp)
    }

    @Test("Leaving the state after a restore still cancels its state timeout")
    func leavingAfterRestoreCancels() async throws {
        let clock = TestClock()
        let snapshot = try await askedAndSnapshotted(clock)

        let restored = MachineHost(restoring: snapshot, clock: clock)
        restored.start()
        _ = try await restored.sendAndWait(.answer)
        #expect(await restored.inFlightEffects.isEmpty, "the restored timer was cancelled when the machine left waiting")
        await clock.advance(by: .seconds(60)) { await restored.flush() }
        #expect(await restored.state == .answered)
    }

    @Test("A user's id spelled like a reserved one is another id")
    func userIdsDoNotCollide() {
        #expect(EffectID("state-timeout") != .stateTimeout)
        #expect(EffectID("event-timeout") != .eventTimeout)
        #expect(EffectID.stateTimeout != .eventTimeout)
    }

    @Test("A state timeout that fired but was cancelled before its turn is dropped: its key is no longer live")
    func firedTimerDroppedByTheKeyCheck() async throws {
        let clock = TestClock()
        var snapshot = try await askedAndSnapshotted(clock)
        snapshot.queuedEvents = [.answer]
        let due = try #require(snapshot.timers.first?.deadline)
        // The restored timeout fires as it is armed, behind the queued answer that leaves waiting.
        let restored = MachineHost(restoring: snapshot, clock: DueNowClock(now: due + .seconds(1)))
        restored.start()
        await restored.flush()
        #expect(await restored.state == .answered, "the fired timeout was not delivered after the answer")
    }

    /// The snapshot, through JSON, of a `Talk` that heard `event` at `clock`'s now.
    private func talkedAndSnapshotted(_ event: Talk.Event, _ clock: TestClock) async throws -> Snapshot<Talk> {
        let original = MachineHost(Talk.self, clock: clock)
        original.start()
        _ = try await original.sendAndWait(event)
        let snapshot = await original.snapshot()
        await original.stop()
        return try JSONDecoder().decode(Snapshot<Talk>.self, from: JSONEncoder().encode(snapshot))
    }

    @Test("A restored event timeout fires at its original deadline")
    func restoredEventTimeoutFires() async throws {
        let clock = TestClock()
        let snapshot = try await talkedAndSnapshotted(.say, clock)
        #expect(snapshot.timers.map(\.id) == [.eventTimeout])
        await clock.advance(by: .seconds(10))
        let restored = MachineHost(restoring: snapshot, clock: clock)
        restored.start()
        await restored.flush()
        await clock.advance(by: .seconds(19)) { await restored.flush() }
        #expect(await restored.state == .talking(words: 1))
        await clock.advance(by: .seconds(1)) { await restored.flush() }
        #expect(await restored.state == .hungUp)
    }

    @Test("After a restore, a sent event cancels the restored event timeout")
    func sentEventCancelsRestoredEventTimeout() async throws {
        let clock = TestClock()
        let snapshot = try await talkedAndSnapshotted(.say, clock)
        let restored = MachineHost(restoring: snapshot, clock: clock)
        restored.start()
        _ = try await restored.sendAndWait(.nod)
        #expect(await restored.inFlightEffects.isEmpty)
        await clock.advance(by: .seconds(60)) { await restored.flush() }
        #expect(await restored.state == .talking(words: 1))
    }

    @Test("After a restore, a restored timer's event cancels the restored event timeout")
    func timerEventCancelsRestoredEventTimeout() async throws {
        let clock = TestClock()
        let snapshot = try await talkedAndSnapshotted(.sayAndRing, clock)
        #expect(Set(snapshot.timers.map(\.id)) == [.eventTimeout, "ring"])
        let restored = MachineHost(restoring: snapshot, clock: clock)
        restored.start()
        await restored.flush()
        await clock.advance(by: .seconds(20)) { await restored.flush() }
        #expect(await restored.inFlightEffects.isEmpty, "the ring at 20 s ended the event timeout due at 30 s")
        await clock.advance(by: .seconds(60)) { await restored.flush() }
        #expect(await restored.state == .talking(words: 1))
    }
}
