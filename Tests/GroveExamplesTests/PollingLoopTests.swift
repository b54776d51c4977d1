import Foundation
import Grove
import GroveExamples
import GroveTestSupport
import GroveTesting
import Testing

/// Seed 000's polling loop as an Oak `EffectTransducer` (`Oak<PollingLoop>`), in `TestStore`:
/// the loop's sleeps and the update times come from a `ManualSleeper`, so ticks arrive when the
/// test wakes the loop.
@Suite("PollingLoop", .timeLimit(.minutes(2)))
struct PollingLoopTests {
    static let news = Data("news".utf8)

    @Test("start ticks at once and fetches; a wake is the next tick, stamped with the clock")
    func ticks() async {
        let sleeper = ManualSleeper()
        let store = TestStore(Oak<PollingLoop>.self, env: Self.env(sleeper))
        let start = sleeper.now()

        await store.send(.startPolling(interval: 30)) { $0 = .polling(interval: 30, lastUpdate: nil) }
        await store.receive(.tick)
        await store.receive(.dataUpdated(Self.news, at: start)) { $0 = .polling(interval: 30, lastUpdate: start) }
        sleeper.wake()
        await store.receive(.tick)
        await store.receive(.dataUpdated(Self.news, at: start + 30)) { $0 = .polling(interval: 30, lastUpdate: start + 30) }
        await store.send(.stopPolling) { $0 = .idle }
        await store.finish()
        #expect(sleeper.requested == [.seconds(30), .seconds(30)])
    }

    @Test("pause ends the loop and keeps the last update; resume ticks at once; stop ends it again")
    func pauseResumeStop() async {
        let sleeper = ManualSleeper()
        let store = TestStore(Oak<PollingLoop>.self, env: Self.env(sleeper))
        let start = sleeper.now()

        await store.send(.startPolling(interval: 5)) { $0 = .polling(interval: 5, lastUpdate: nil) }
        await store.receive(.tick)
        await store.receive(.dataUpdated(Self.news, at: start)) { $0 = .polling(interval: 5, lastUpdate: start) }
        await store.send(.pausePolling) { $0 = .paused(interval: 5, lastUpdate: start) }
        await store.send(.dataUpdated(Self.news, at: start + 1))   // paused: ignored, as the seed's `default`
        await store.send(.resumePolling) { $0 = .polling(interval: 5, lastUpdate: start) }
        await store.receive(.tick)
        await store.receive(.dataUpdated(Self.news, at: start))
        await store.send(.stopPolling) { $0 = .idle }
        await store.send(.resumePolling)                              // idle: ignored
        await store.finish()
    }

    @Test("a failed fetch sends nothing: the seed leaves its handling to the reader")
    func failedFetch() async {
        let sleeper = ManualSleeper()
        let env = PollingLoop.Env(fetchData: { throw CancellationError() },
                                  sleep: { try await sleeper.sleep(for: $0) }, now: { sleeper.now() })
        let store = TestStore(Oak<PollingLoop>.self, env: env)
        await store.send(.startPolling(interval: 1)) { $0 = .polling(interval: 1, lastUpdate: nil) }
        await store.receive(.tick)
        await store.send(.stopPolling) { $0 = .idle }
        await store.finish()
    }

    @Test("intervals a sleep cannot take are refused before update", arguments: [0, -1, 0.001, Double.infinity, Double.nan, 40_000_000])
    func refusedIntervals(interval: Double) {
        #expect(PollingLoop.refusal(of: .startPolling(interval: interval)) != nil)
        #expect(Oak<PollingLoop>.refusal(of: .startPolling(interval: interval)) != nil, "Oak forwards the refusal")
    }

    @Test("a tenth of a second, a year and the other events are accepted")
    func acceptedEvents() {
        for event: PollingLoop.Event in [.startPolling(interval: 0.1), .startPolling(interval: 31_536_000), .tick, .pausePolling] {
            #expect(Oak<PollingLoop>.refusal(of: event) == nil, "\(event)")
        }
    }

    @Test("states and events survive a JSON round trip, as a worker sends them")
    func coding() throws {
        let states: [PollingLoop.State] = [.idle, .polling(interval: 30, lastUpdate: nil),
                                           .paused(interval: 30, lastUpdate: Date(timeIntervalSince1970: 1_700_000_000))]
        for state in states {
            #expect(try JSONDecoder().decode(PollingLoop.State.self, from: JSONEncoder().encode(state)) == state)
        }
        let event = PollingLoop.Event.dataUpdated(Self.news, at: Date(timeIntervalSince1970: 1_700_000_000))
        #expect(try JSONDecoder().decode(PollingLoop.Event.self, from: JSONEncoder().encode(event)) == event)
        let start = try JSONDecoder().decode(PollingLoop.Event.self, from: Data(#"{"startPolling":{"interval":60}}"#.utf8))
        #expect(start == .startPolling(interval: 60))
    }

    static func env(_ sleeper: ManualSleeper) -> PollingLoop.Env {
        PollingLoop.Env(fetchData: { news }, sleep: { try await sleeper.sleep(for: $0) }, now: { sleeper.now() })
    }
}
