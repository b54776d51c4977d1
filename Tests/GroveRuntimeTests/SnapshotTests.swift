import Testing
import Foundation
import Grove
import GroveRuntime
import GroveTesting

@Suite("Snapshots", .timeLimit(.minutes(2)))
struct SnapshotTests {
    /// Encodes and decodes through JSON, as a snapshot written to disk would be.
    private func roundTrip(_ snapshot: Snapshot<Probe>) throws -> Snapshot<Probe> {
        try JSONDecoder().decode(Snapshot<Probe>.self, from: JSONEncoder().encode(snapshot))
    }

    @Test("Scenario 21: state, queued events and pending timers round-trip through Codable")
    func snapshotRoundTripsThroughCodable() async throws {
        let clock = TestClock()
        let original = MachineHost(Probe.self, env: .init(), clock: clock)
        original.start()
        _ = try await original.sendAndWait(.note("before"))
        _ = try await original.sendAndWait(.startTimer(id: "reminder", seconds: 10, value: "ring"))
        let snapshot = try roundTrip(await original.snapshot())
        #expect(snapshot.state.log == ["before"])
        #expect(snapshot.timers.map(\.id) == ["reminder"])
        #expect(snapshot.timers.first?.deadline == clock.now() + .seconds(10))
        await original.stop()

        let restored = MachineHost(restoring: snapshot, env: .init(), clock: clock)
        try restored.send(.note("after restore"))
        restored.start()
        await restored.flush()
        #expect(await restored.state.log == ["before", "after restore"])
        await clock.advance(by: .seconds(9)) { await restored.flush() }
        #expect(await restored.state.log == ["before", "after restore"])
        await clock.advance(by: .seconds(1)) { await restored.flush() }
        #expect(await restored.state.log == ["before", "after restore", "ring"])
    }

    /// A stopped machine's snapshot taken right after it armed timer "t" for 10 s on `clock`.
    private func snapshotWithTenSecondTimer(_ clock: TestClock) async throws -> Snapshot<Probe> {
        let original = MachineHost(Probe.self, env: .init(), clock: clock)
        original.start()
        _ = try await original.sendAndWait(.startTimer(id: "t", seconds: 10, value: "ring"))
        let snapshot = try roundTrip(await original.snapshot())
        await original.stop()
        return snapshot
    }

    @Test("Scenario 21: a restored timer keeps its absolute deadline")
    func restoredTimerKeepsAbsoluteDeadline() async throws {
        let clock = TestClock()
        let snapshot = try await snapshotWithTenSecondTimer(clock)

        await clock.advance(by: .seconds(6))
        let restored = MachineHost(restoring: snapshot, env: .init(), clock: clock)
        restored.start()
        await restored.flush()
        await clock.advance(by: .seconds(3)) { await restored.flush() }
        #expect(await restored.state.log.isEmpty, "9 s after the snapshot the 10 s timer must not have fired")
        await clock.advance(by: .seconds(1)) { await restored.flush() }
        #expect(await restored.state.log == ["ring"])
    }

    @Test("Scenario 21: a timer whose deadline passed while the machine was down fires at once on restore")
    func overdueTimerFiresOnRestore() async throws {
        let clock = TestClock()
        let snapshot = try await snapshotWithTenSecondTimer(clock)

        await clock.advance(by: .seconds(60))
        let restored = MachineHost(restoring: snapshot, env: .init(), clock: clock)
        restored.start()
        await restored.flush()
        await clock.advance(by: .zero) { await restored.flush() }
        #expect(await restored.state.log == ["ring"])
    }

    @Test("Scenario 21: work a snapshot cannot carry is listed, never silently lost")
    func snapshotListsWhatItOmits() async throws {
        let clock = TestClock()
        let host = MachineHost(Probe.self, env: .init(), clock: clock)
        host.start()
        _ = try await host.sendAndWait(.startGated(id: "task", value: "never"))
        _ = try await host.sendAndWait(.sequence(id: "seq", steps: [.timer(seconds: 5, value: "step")]))
        _ = try await host.sendAndWait(.startTimer(id: "plain", seconds: 5, value: "ring"))
        let snapshot = try roundTrip(await host.snapshot())
        #expect(snapshot.timers.map(\.id) == ["plain"])
        #expect(snapshot.omittedEffects.contains("task"))
        #expect(snapshot.omittedEffects.count == 2, "the task and the timer that is a sequence step")
        await host.stop()
    }

    @Test("Scenario 21: events queued at snapshot time are processed first after restore")
    func queuedEventsSurviveSnapshot() async throws {
        let original = MachineHost(Probe.self, env: .init())
        try original.send(.note("queued-1"))
        try original.send(.note("queued-2"))
        let snapshot = try roundTrip(await original.snapshot())
        #expect(snapshot.queuedEvents == [.note("queued-1"), .note("queued-2")])

        let restored = MachineHost(restoring: snapshot, env: .init())
        restored.start()
        #expect(try await restored.sendAndWait(.note("new")).log == ["queued-1", "queued-2", "new"])
    }

    @Test("A restored host stopped before it first ran arms none of its timers")
    func stoppedBeforeItRanArmsNoTimers() async throws {
        let clock = TestClock()
        let original = MachineHost(Probe.self, env: .init(), clock: clock)
        original.start()
        _ = try await original.sendAndWait(.startTimer(id: "reminder", seconds: 10, value: "ring"))
        let snapshot = await original.snapshot()
        await original.stop()
        let restored = MachineHost(restoring: snapshot, env: .init(), clock: clock)
        await restored.stop()
        restored.start()
        await restored.flush()
        #expect(await restored.hasEnded)
        let armed = await restored.inFlightEffects
        #expect(armed.isEmpty, "armed on an ended host: \(armed)")
    }

    @Test("Scenario 21: io in flight restores as the interrupted failure its machine maps, before queued events")
    func ioInFlightRestoresAsInterrupted() async throws {
        var handlers = IOHandlers()
        handlers.register(SlowLookup.self) { _ in
            try await Task.sleep(for: .seconds(3600))
            return "too late"
        }
        let original = MachineHost(Fetcher.self, io: handlers)
        original.start()
        #expect(try await original.sendAndWait(.fetch) == .fetching)
        try original.send(.note)
        let snapshot = try JSONDecoder().decode(Snapshot<Fetcher>.self, from: JSONEncoder().encode(await original.snapshot()))
        #expect(snapshot.interruptedIO.map(\.id) == ["lookup"])
        #expect(snapshot.omittedEffects.isEmpty, "carried io is not also omitted: \(snapshot.omittedEffects)")
        await original.stop()

        let restored = MachineHost(restoring: snapshot, io: handlers)
        restored.start()
        await restored.flush()
        #expect(await restored.state == .failed(code: "interrupted", notes: 1), "the failure first, then the queued note")
    }
}

private struct SlowLookup: IORequest {
    typealias Response = String
}

/// One io request under id "lookup"; remembers how it ended and how many notes came after.
private enum Fetcher: Machine {
    enum State: Codable, Sendable, Equatable {
        case idle, fetching
        case got(String)
        case failed(code: String, notes: Int)
    }

    enum Event: Codable, Sendable, Equatable {
        case fetch, note
        case result(String)
        case failure(code: String)
    }

    static var initialState: State { .idle }

    static func update(_ state: inout State, event: Event) -> Effect {
        switch (state, event) {
        case (.idle, .fetch):
            state = .fetching
            return .io(id: "lookup", SlowLookup()) { result in
                switch result {
                case .success(let text): .result(text)
                case .failure(let failure): .failure(code: failure.code.rawValue)
                }
            }
        case (.fetching, .result(let text)):
            state = .got(text)
        case (.fetching, .failure(let code)):
            state = .failed(code: code, notes: 0)
        case (.failed(let code, let notes), .note):
            state = .failed(code: code, notes: notes + 1)
        default:
            return .unhandled
        }
        return .none
    }
}
