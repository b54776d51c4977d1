import Grove
import GroveExamples
import GroveRuntime
import GroveTesting
import Testing

@Suite("PollingService", .timeLimit(.minutes(2)))
struct PollingServiceTests {
    private let t0 = Timestamp(sinceEpoch: .seconds(1_700_000_000))

    private func data(_ sequence: Int) -> PolledData {
        PolledData(sequence: sequence, updatedAt: t0 + .seconds(sequence), body: "update \(sequence)")
    }

    // MARK: Pure transitions

    @Test("start fetches at once and arms the first tick")
    func startPolls() {
        var state = PollingService.initialState
        let effect = PollingService.update(&state, event: .startPolling(interval: 5))
        #expect(state == .polling(interval: 5, lastUpdate: nil, failures: 0))
        #expect(effect.shape.flattened == [
            .timer(id: PollingService.tickID, delay: .seconds(5), event: .tick),
            .io(id: PollingService.fetchID, FetchData(since: nil)),
        ])
    }

    @Test("start needs an interval from a tenth of a second to a year; others are refused before update",
          arguments: [0, -1, 1e-6, 0.001, 0.099_999, 31_536_000.5, 1e21, Double.infinity, Double.nan])
    func startRejectsBadIntervals(interval: Double) {
        var state = PollingService.initialState
        #expect(PollingService.update(&state, event: .startPolling(interval: interval)).isUnhandled)
        #expect(state == .idle)
        let refusal = PollingService.refusal(of: .startPolling(interval: interval))
        #expect(refusal?.contains("it must be from 0.1 s (a tenth of a second) to 31536000 s (a year)") == true)
    }

    @Test("the bounds themselves and the other events are accepted", arguments: [
        PollingService.Event.startPolling(interval: 0.1), .startPolling(interval: 31_536_000), .startPolling(interval: 5),
        .tick, .pausePolling, .resumePolling, .stopPolling,
    ])
    func goodEventsAreNotRefused(event: PollingService.Event) {
        #expect(PollingService.refusal(of: event) == nil)
    }

    @Test("a tick re-arms the timer and fetches what changed since the last update")
    func tickPolls() {
        var state = PollingService.State.polling(interval: 0.5, lastUpdate: data(1).updatedAt, failures: 2)
        let effect = PollingService.update(&state, event: .tick)
        #expect(state == .polling(interval: 0.5, lastUpdate: data(1).updatedAt, failures: 2))
        #expect(effect.shape.flattened == [
            .timer(id: PollingService.tickID, delay: .milliseconds(500), event: .tick),
            .io(id: PollingService.fetchID, FetchData(since: data(1).updatedAt)),
        ])
    }

    @Test("results set lastUpdate from the payload; failures are counted")
    func results() {
        var state = PollingService.State.polling(interval: 5, lastUpdate: nil, failures: 0)
        #expect(PollingService.update(&state, event: .dataUpdated(data(3))).isNone)
        #expect(state == .polling(interval: 5, lastUpdate: data(3).updatedAt, failures: 0))
        #expect(PollingService.update(&state, event: .fetchFailed(message: "timeout")).isNone)
        #expect(PollingService.update(&state, event: .fetchFailed(message: "timeout")).isNone)
        #expect(state == .polling(interval: 5, lastUpdate: data(3).updatedAt, failures: 2))
    }

    // The tick is the state timeout of `polling`: leaving it, `step` (what hosts run) cancels
    // it, not `update`; so pause and stop go through `step` here.
    @Test("pause and stop cancel the timer and the fetch; resume polls again at once")
    func pauseResumeStop() {
        let cancelBoth: [EffectShape<PollingService>] = [
            .cancel(PollingService.tickID), .cancel(PollingService.fetchID), .cancel("poll-tick"),
        ]
        var state = PollingService.State.polling(interval: 5, lastUpdate: data(1).updatedAt, failures: 1)
        #expect(PollingService.step(&state, event: .pausePolling).shape.flattened == cancelBoth)
        #expect(state == .paused(interval: 5, lastUpdate: data(1).updatedAt, failures: 1))

        #expect(PollingService.update(&state, event: .resumePolling).shape.flattened == [
            .timer(id: PollingService.tickID, delay: .seconds(5), event: .tick),
            .io(id: PollingService.fetchID, FetchData(since: data(1).updatedAt)),
        ])
        #expect(state == .polling(interval: 5, lastUpdate: data(1).updatedAt, failures: 1))

        #expect(PollingService.step(&state, event: .stopPolling).shape.flattened == cancelBoth)
        #expect(state == .idle)

        state = .paused(interval: 5, lastUpdate: nil, failures: 0)
        #expect(PollingService.step(&state, event: .stopPolling).shape.flattened == cancelBoth)
        #expect(state == .idle)
    }

    @Test("events out of place are unhandled and change nothing", arguments: [
        (PollingService.State.idle, PollingService.Event.tick),
        (.idle, .pausePolling),
        (.idle, .stopPolling),
        (.polling(interval: 5, lastUpdate: nil, failures: 0), .startPolling(interval: 1)),
        (.polling(interval: 5, lastUpdate: nil, failures: 0), .resumePolling),
        (.paused(interval: 5, lastUpdate: nil, failures: 0), .tick),
        (.paused(interval: 5, lastUpdate: nil, failures: 0),
         .dataUpdated(PolledData(sequence: 1, updatedAt: Timestamp(sinceEpoch: .zero), body: ""))),
    ])
    func unhandledPairs(state start: PollingService.State, event: PollingService.Event) {
        var state = start
        #expect(PollingService.update(&state, event: event).isUnhandled)
        #expect(state == start)
    }

    @Test("states and events survive a JSON round trip")
    func codableRoundTrip() throws {
        let states: [PollingService.State] = [.idle, .polling(interval: 2.5, lastUpdate: t0, failures: 1),
                                              .paused(interval: 60, lastUpdate: nil, failures: 0)]
        let events: [PollingService.Event] = [.startPolling(interval: 0.25), .pausePolling, .resumePolling, .stopPolling, .tick,
                                              .dataUpdated(data(7)), .fetchFailed(message: "m")]
        #expect(try roundTrip(states) == states)
        #expect(try roundTrip(events) == events)
    }

    // MARK: Flows through the test store

    @Test("polling follows the test clock: a tick per interval, each with a fetch; failures are counted")
    func pollingAdvancesWithClock() async throws {
        let fetches = PendingCalls<FetchData>()
        let store = TestStore(PollingService.self, io: handlers(fetches))

        await store.send(.startPolling(interval: 5)) { $0 = .polling(interval: 5, lastUpdate: nil, failures: 0) }
        let first = try #require(await fetches.next())
        #expect(first.request == FetchData(since: nil))
        await first.succeed(data(1))
        await store.receive(.dataUpdated(data(1))) {
            $0 = .polling(interval: 5, lastUpdate: self.data(1).updatedAt, failures: 0)
        }

        await store.advance(by: .seconds(4))
        #expect(fetches.count == 1, "no tick before the interval has passed")
        await store.advance(by: .seconds(1))
        await store.receive(.tick)
        let second = try #require(await fetches.next())
        #expect(second.request == FetchData(since: data(1).updatedAt))
        await second.succeed(data(2))
        await store.receive(.dataUpdated(data(2))) {
            $0 = .polling(interval: 5, lastUpdate: self.data(2).updatedAt, failures: 0)
        }

        await store.advance(by: .seconds(5))
        await store.receive(.tick)
        let third = try #require(await fetches.next())
        await third.fail(IOFailure(.handlerFailed, "503"))
        await store.receive(.fetchFailed(message: "503")) {
            $0 = .polling(interval: 5, lastUpdate: self.data(2).updatedAt, failures: 1)
        }

        await store.advance(by: .seconds(5))
        await store.receive(.tick)
        let fourth = try #require(await fetches.next())
        #expect(fourth.request == FetchData(since: data(2).updatedAt), "a failure keeps the last update")
        await fourth.succeed(data(4))
        await store.receive(.dataUpdated(data(4))) {
            $0 = .polling(interval: 5, lastUpdate: self.data(4).updatedAt, failures: 1)
        }

        await store.send(.stopPolling) { $0 = .idle }
        #expect(store.clock.pendingTimerCount == 0)
        await store.advance(by: .seconds(60))
        #expect(fetches.count == 4)
        await store.finish()
    }

    @Test("pause cancels the fetch in flight and the timer; resume fetches at once and ticks again")
    func pauseCancelsInFlightFetch() async throws {
        let fetches = PendingCalls<FetchData>()
        let store = TestStore(PollingService.self, io: handlers(fetches))

        await store.send(.startPolling(interval: 10)) { $0 = .polling(interval: 10, lastUpdate: nil, failures: 0) }
        let inFlight = try #require(await fetches.next())
        await store.send(.pausePolling) { $0 = .paused(interval: 10, lastUpdate: nil, failures: 0) }
        #expect(await inFlight.cancellation(), "pause must cancel the fetch in flight")
        #expect(store.clock.pendingTimerCount == 0, "pause must cancel the next tick")
        #expect(await store.host.inFlightEffects.isEmpty)

        await inFlight.succeed(data(1))
        await store.advance(by: .seconds(60))
        #expect(fetches.count == 1, "nothing is fetched while paused")

        await store.send(.resumePolling) { $0 = .polling(interval: 10, lastUpdate: nil, failures: 0) }
        let resumed = try #require(await fetches.next())
        await resumed.succeed(data(2))
        await store.receive(.dataUpdated(data(2))) {
            $0 = .polling(interval: 10, lastUpdate: self.data(2).updatedAt, failures: 0)
        }
        await store.advance(by: .seconds(10))
        await store.receive(.tick)
        let ticked = try #require(await fetches.next())

        await store.send(.stopPolling) { $0 = .idle }
        #expect(await ticked.cancellation(), "stop must cancel the fetch in flight")
        await ticked.succeed(data(3))
        await store.finish()
    }

    @Test("a fetch slower than the interval is replaced by the next tick's fetch")
    func slowFetchIsReplaced() async throws {
        let fetches = PendingCalls<FetchData>()
        let store = TestStore(PollingService.self, io: handlers(fetches))

        await store.send(.startPolling(interval: 1)) { $0 = .polling(interval: 1, lastUpdate: nil, failures: 0) }
        let slow = try #require(await fetches.next())
        await store.advance(by: .seconds(1))
        await store.receive(.tick)
        #expect(await slow.cancellation())
        let next = try #require(await fetches.next())

        await slow.succeed(data(1))
        await next.succeed(data(2))
        await store.receive(.dataUpdated(data(2))) {
            $0 = .polling(interval: 1, lastUpdate: self.data(2).updatedAt, failures: 0)
        }
        await store.send(.pausePolling) { $0 = .paused(interval: 1, lastUpdate: self.data(2).updatedAt, failures: 0) }
        await store.finish()
    }

    @Test("with the in-memory service, lastUpdate follows the service's answers as the clock advances")
    func inMemoryService() async {
        let clock = TestClock(now: t0)
        let store = TestStore(PollingService.self, io: ExampleHandlers.inMemory(now: { clock.now() }), clock: clock)

        await store.send(.startPolling(interval: 30)) { $0 = .polling(interval: 30, lastUpdate: nil, failures: 0) }
        await store.receive(.dataUpdated(PolledData(sequence: 1, updatedAt: t0, body: "update 1"))) {
            $0 = .polling(interval: 30, lastUpdate: self.t0, failures: 0)
        }
        await store.advance(by: .seconds(30))
        await store.receive(.tick)
        await store.receive(.dataUpdated(PolledData(sequence: 2, updatedAt: t0 + .seconds(30), body: "update 2"))) {
            $0 = .polling(interval: 30, lastUpdate: self.t0 + .seconds(30), failures: 0)
        }
        await store.send(.stopPolling) { $0 = .idle }
        await store.finish()
    }

    @Test("a snapshot taken while polling records the pending tick with its absolute deadline")
    func snapshotKeepsNextTick() async throws {
        let clock = TestClock(now: t0)
        let fetches = PendingCalls<FetchData>()
        let host = MachineHost(PollingService.self, io: handlers(fetches), clock: clock)
        host.start()
        _ = try await host.sendAndWait(.startPolling(interval: 30))
        let fetch = try #require(await fetches.next())
        let snapshot = try roundTrip(await host.snapshot())
        await host.stop()
        #expect(await fetch.cancellation())
        await fetch.succeed(data(1))

        #expect(snapshot.state == .polling(interval: 30, lastUpdate: nil, failures: 0))
        #expect(snapshot.timers.map(\.id) == [PollingService.tickID])
        #expect(snapshot.timers.map(\.deadline) == [t0 + .seconds(30)])
    }

    @Test("pause cancels the \"poll-tick\" of a record from before state timeouts: resume fetches once, not twice")
    func pauseCancelsAnOldRecordsTick() async throws {
        let clock = TestClock(now: t0)
        let fetches = PendingCalls<FetchData>()
        let host = MachineHost(PollingService.self, io: handlers(fetches), clock: clock)
        host.start()
        _ = try await host.sendAndWait(.startPolling(interval: 30))
        let fetch = try #require(await fetches.next())
        var snapshot = try roundTrip(await host.snapshot())
        await host.stop()
        await fetch.succeed(data(1))
        // As a record written before the port: the tick under its old id.
        for index in snapshot.timers.indices { snapshot.timers[index].id = "poll-tick" }

        let restored = MachineHost(restoring: snapshot, io: handlers(fetches), clock: clock)
        restored.start()
        await clock.advance(by: .seconds(10)) { await restored.flush() }
        _ = try await restored.sendAndWait(.pausePolling)
        #expect(await restored.inFlightEffects.isEmpty, "pause cancelled the old record's tick")
        _ = try await restored.sendAndWait(.resumePolling)
        let resumed = try #require(await fetches.next())
        await resumed.succeed(data(2))
        // The old tick was due at 30 s, the new one at 40 s.
        await clock.advance(by: .seconds(25)) { await restored.flush() }
        #expect(fetches.count == 2, "no tick fetched again 25 s after the resume at 10 s")
        await restored.stop()
    }

    private func handlers(_ fetches: PendingCalls<FetchData>) -> IOHandlers {
        var io = IOHandlers()
        io.register(FetchData.self) { try await fetches.handle($0) }
        return io
    }
}
