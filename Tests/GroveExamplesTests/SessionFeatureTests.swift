import Grove
import GroveExamples
import GroveRuntime
import GroveTesting
import Testing

/// Seed 002's "Conditional Cancellation", its `userLoggedOut` as written, in the reader's
/// `SessionFeature`. The background operations wait until the test lets them finish.
@Suite("SessionFeature", .timeLimit(.minutes(2)))
struct SessionFeatureTests {
    @Test("logging out cancels the three operations: none of their results arrives")
    func logoutCancelsEverything() async {
        let started = ExampleLog<String>(), cancelled = ExampleLog<String>()
        let allStarted = ExampleSignal(), allCancelled = ExampleSignal()
        var handlers = IOHandlers()
        handlers.register(SessionWork.self) { request in
            started.append(request.operation)
            if started.values.count == 3 { allStarted.fire() }
            do {
                try await Task.sleep(for: .seconds(3600))     // ended by cancellation only
            } catch {
                cancelled.append(request.operation)
                if cancelled.values.count == 3 { allCancelled.fire() }
                throw error
            }
            return "\(request.operation) done"
        }
        let store = TestStore(Tea<SessionFeature>.self, io: handlers)
        await store.send(.userLoggedIn) { $0.isAuthenticated = true }
        let running = await store.host.inFlightEffects
        #expect(running.isSuperset(of: [SessionFeature.userDataSync, SessionFeature.notificationStream,
                                        SessionFeature.analyticsUpload]), "\(running)")
        #expect(await allStarted.wait(), "the three operations should start")
        await store.send(.userLoggedOut) { $0.isAuthenticated = false }
        await store.finish()      // fails for effects still running, or results received
        #expect(await allCancelled.wait(), "the three operations' tasks should be cancelled: \(cancelled.values)")
        #expect(Set(cancelled.values) == ["user-data-sync", "notification-stream", "analytics-upload"])
    }

    @Test("an operation that finishes while signed in is recorded; one more login is unhandled")
    func finishedWork() async {
        var handlers = IOHandlers()
        handlers.register(SessionWork.self) { request in
            guard request.operation == "user-data-sync" else { try await Task.sleep(for: .seconds(3600)); return "" }
            return "synced"
        }
        let store = TestStore(Tea<SessionFeature>.self, io: handlers)
        await store.send(.userLoggedIn) { $0.isAuthenticated = true }
        await store.receive(.workFinished("synced")) { $0.finished = ["synced"] }
        await store.sendUnhandled(.userLoggedIn)
        await store.send(.userLoggedOut) { $0.isAuthenticated = false }
        await store.sendUnhandled(.workFinished("late"))
        await store.finish()
    }
}
