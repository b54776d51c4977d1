public import Foundation
public import Grove

/// Seed 000's "Timer and Polling Pattern" as the seed writes it: an Oak ``EffectTransducer``
/// whose polling effect loops, sending `.tick` and sleeping, and whose fetch is a closure of its
/// environment. Run it as `Oak<PollingLoop>`; workers register it under the name `PollingLoop`.
///
/// ``PollingService`` is the same pattern written on Grove's timers (a state timeout on the host's
/// clock, a Codable fetch that may run on another worker). This one keeps the seed's shape, so that
/// Oak's effect path runs on a worker and in `TestStore` as a seed user wrote it.
///
/// Beyond the seed's text (seed 000's `PollingService`, renamed here only because the native
/// example owns that name): `public` and the conformances in the extensions below
/// (`Sendable`, `Codable`, `Equatable`, so that instances cross processes), and one seam, marked
/// `// Seam` in the code: the loop sleeps with ``Env/sleep`` and the time of an update is read
/// from ``Env/now``, both defaulting to the real ones (`Task.sleep`, `Date()`), so that a test
/// drives ticks and time without waiting. The time therefore travels with the update,
/// `dataUpdated(data, at:)`, because `update` cannot see the environment; the seed read `Date()`
/// inside `update`, which made the transition depend on when it ran. ``refusal(of:)`` refuses
/// intervals a sleep cannot take before they reach `update`.
///
/// ```swift
/// let poller = MachineHost(Oak<PollingLoop>.self, env: PollingLoop.Env(fetchData: { try await api.latest() }))
/// poller.start()
/// try poller.send(.startPolling(interval: 30))   // a tick now, then every 30 s
/// ```
public enum PollingLoop: EffectTransducer {
    /// Whether it polls, at which interval (seconds), and when data last arrived.
    public enum State: NonTerminal {
        /// Not polling; `startPolling` begins.
        case idle
        /// The loop runs; `lastUpdate` is when data last arrived.
        case polling(interval: TimeInterval, lastUpdate: Date?)
        /// The loop is cancelled; `resumePolling` starts it again.
        case paused(interval: TimeInterval, lastUpdate: Date?)
    }

    /// Commands, ticks from the loop, and fetched data.
    public enum Event {
        /// Ticks now, then every `interval` seconds.
        case startPolling(interval: TimeInterval)
        /// Back to `idle`.
        case stopPolling
        /// Stops the loop, keeping the interval and the last update.
        case pausePolling
        /// Ticks now and goes on at the kept interval.
        case resumePolling
        /// The loop woke: fetch.
        case tick
        /// A fetch answered.
        // Seam: the time of the update travels with it (the seed: `dataUpdated(Data)`).
        case dataUpdated(Data, at: Date)
    }

    /// The fetch, and the sleeper and clock the loop uses.
    public struct Env: Sendable {
        /// Fetches the latest data.
        public var fetchData: @Sendable () async throws -> Data
        // Seam: the sleeper and the clock, real by default.
        /// Sleeps between ticks; `Task.sleep` by default.
        public var sleep: @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }
        /// The time an update arrives; `Date()` by default.
        public var now: @Sendable () -> Date = { Date() }

        /// An environment fetching with `fetchData`, sleeping with `sleep` and telling the time
        /// with `now`.
        public init(
            fetchData: @escaping @Sendable () async throws -> Data,
            sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) },
            now: @escaping @Sendable () -> Date = { Date() }
        ) {
            self.fetchData = fetchData
            self.sleep = sleep
            self.now = now
        }
    }

    public static var initialState: State { .idle }

    public static func update(_ state: inout State, event: Event) -> Effect? {
        switch (state, event) {
        case (.idle, .startPolling(let interval)):
            state = .polling(interval: interval, lastUpdate: nil)
            return pollingEffect(interval: interval)

        case (.polling, .stopPolling), (.paused, .stopPolling):
            state = .idle
            return cancelPollingEffect()

        case (.polling(let interval, let lastUpdate), .pausePolling):
            state = .paused(interval: interval, lastUpdate: lastUpdate)
            return cancelPollingEffect()

        case (.paused(let interval, let lastUpdate), .resumePolling):
            state = .polling(interval: interval, lastUpdate: lastUpdate)
            return pollingEffect(interval: interval)

        // Seam: the update's own time, where the seed read `Date()`.
        case (.polling(let interval, _), .dataUpdated(_, let updatedAt)):
            state = .polling(interval: interval, lastUpdate: updatedAt)
            return nil

        case (.polling(let interval, let lastUpdate), .tick):
            state = .polling(interval: interval, lastUpdate: lastUpdate)
            return fetchDataEffect()

        default:
            return nil
        }
    }

    static func pollingEffect(interval: TimeInterval) -> Effect {
        Effect(id: "polling") { env, input in
            while !Task.isCancelled {
                try input.send(.tick)
                // Seam: the environment's sleeper (the seed: `Task.sleep(for:)`).
                try await env.sleep(.seconds(interval))
            }
        }
    }

    static func fetchDataEffect() -> Effect {
        Effect { env, input in
            do {
                let data = try await env.fetchData()
                // Seam: stamped with the environment's clock.
                try input.send(.dataUpdated(data, at: env.now()))
            } catch {
                // Handle error appropriately
            }
        }
    }

    static func cancelPollingEffect() -> Effect {
        Effect.cancel(id: "polling")
    }
}

extension PollingLoop {
    /// Intervals outside ``PollingService/intervals`` (a tenth of a second to a year), or not a
    /// number, are refused before they reach `update`: `.seconds(_:)` cannot take an infinite
    /// one, and one too short would loop without pause.
    public static func refusal(of event: Event) -> String? {
        guard case .startPolling(let interval) = event, !PollingService.intervals.contains(interval) else { return nil }
        return "startPolling's interval is \(interval) s; it must be from \(PollingService.intervals.lowerBound) s "
            + "(a tenth of a second) to \(Int(PollingService.intervals.upperBound)) s (a year)"
    }

    /// What `fsm-worker`'s loop fetches: the same few bytes every time.
    public static let demo = Env(fetchData: { Data("the latest news".utf8) })
}

extension PollingLoop.State: Sendable, Codable, Equatable {}
extension PollingLoop.Event: Sendable, Codable, Equatable {}
