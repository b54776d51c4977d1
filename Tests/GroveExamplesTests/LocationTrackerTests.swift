import Grove
import GroveExamples
import GroveRuntime
import Testing

@Suite("LocationTracker (SwiftTea dialect)", .timeLimit(.minutes(2)))
struct LocationTrackerTests {
    private let fixes = [
        Location(latitude: 52.52, longitude: 13.40),
        Location(latitude: 48.86, longitude: 2.35),
    ]

    @Test("start streams under \"location-updates\"; updates need tracking to be on")
    func pureTransitions() {
        let (tracking, effect) = LocationTracker.reduce(LocationTracker.State(), .startLocationUpdates)
        #expect(tracking.isTracking)
        guard case .stream(_, let id) = effect else {
            Issue.record("expected a stream effect, got \(effect)")
            return
        }
        #expect(id == "location-updates")
        guard case .cancel(LocationTracker.updatesID) = LocationTracker.reduce(tracking, .stopLocationUpdates).1 else {
            Issue.record("stop should cancel the updates stream")
            return
        }
        guard case .unhandled = LocationTracker.reduce(LocationTracker.State(), .locationUpdate(fixes[0])).1 else {
            Issue.record("an update while not tracking should be unhandled")
            return
        }
    }

    @Test("fixes arrive as state; stopping cancels the stream and runs its onTermination")
    func stopEndsSource() async throws {
        let terminated = ExampleSignal()
        let host = MachineHost(Tea<LocationTracker>.self, env: .replaying(fixes, onTermination: terminated.fire))
        host.start()
        try host.send(.startLocationUpdates)
        let state = try #require(await awaitState(of: host) { $0.updateCount == 2 })
        #expect(state.currentLocation == fixes[1])
        #expect(await host.inFlightEffects == [LocationTracker.updatesID])
        #expect(!terminated.isFired, "the source stays open until the tracker stops")

        let stopped = try await host.sendAndWait(.stopLocationUpdates)
        #expect(!stopped.isTracking)
        #expect(await terminated.wait(), "onTermination did not run after cancel")
        #expect(await host.inFlightEffects.isEmpty)
        await host.stop()
    }

    @Test("stopping the host ends the stream too")
    func hostStopEndsSource() async throws {
        let terminated = ExampleSignal()
        let host = MachineHost(Tea<LocationTracker>.self, env: .replaying(fixes, onTermination: terminated.fire))
        host.start()
        try host.send(.startLocationUpdates)
        #expect(await awaitState(of: host) { $0.updateCount == 2 } != nil)
        await host.stop()
        #expect(await terminated.wait(), "onTermination did not run after the host stopped")
    }

    @Test("tracking can start again after a stop, with a fresh source")
    func restart() async throws {
        let host = MachineHost(Tea<LocationTracker>.self, env: .replaying(fixes))
        host.start()
        try host.send(.startLocationUpdates)
        #expect(await awaitState(of: host) { $0.updateCount == 2 } != nil)
        _ = try await host.sendAndWait(.stopLocationUpdates)
        let restarted = try await host.sendAndWait(.startLocationUpdates)
        #expect(restarted.updateCount == 0)
        #expect(await awaitState(of: host) { $0.isTracking && $0.updateCount == 2 } != nil)
        await host.stop()
    }
}
