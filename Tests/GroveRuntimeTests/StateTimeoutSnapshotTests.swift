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
        case (.waiting, .tooLate):
            state = .gaveUp
            return .none
        case (.idle, .answer), (.idle, .tooLate), (.waiting, .ask), (.answered, _), (.gaveUp, _):
            return .unhandled
        }
    }
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
}
