public import Grove

/// Fetches data at a fixed interval, with pause, resume and stop: the "Timer and Polling" pattern
/// of Oak's *Common Patterns*.
///
/// The seed looped over `Task.sleep` inside one long effect. Here each tick is the state timeout
/// of `polling` (`gen_statem`'s `state_timeout`), `.stateTimeout(after: interval, send: .tick)`,
/// re-armed by the tick itself: a timer, so durable (a snapshot records its deadline) and run on
/// the host's clock, so tests drive it with a test clock; and tied to the state, so leaving
/// `polling` (pause, stop) cancels it without a word from `update`. Each tick sends a Codable
/// ``FetchData`` request under the id `"poll-fetch"`, which may run on another worker; a fetch
/// still in flight at the next tick is replaced by the new one. Pause and stop cancel the fetch
/// in flight.
///
/// Time enters the state only through the service's answers (``PolledData/updatedAt``), never
/// from a clock read in `update`.
///
/// ```swift
/// let poller = MachineHost(PollingService.self, io: handlers)
/// poller.start()
/// try poller.send(.startPolling(interval: 30))   // fetch now, then every 30 s
/// ```
public enum PollingService: StateScoped {
    /// `interval` is in seconds, as the seed's `TimeInterval`. `failures` counts fetches that
    /// failed since polling started; polling goes on after a failure.
    public enum State: Codable, Sendable, Equatable, NonTerminal {
        /// Not polling; `startPolling` begins.
        case idle
        /// A tick is armed; a fetch may be in flight. `lastUpdate` is the `updatedAt` of the
        /// last data received.
        case polling(interval: Double, lastUpdate: Timestamp?, failures: Int)
        /// Nothing armed, nothing in flight; `resumePolling` goes on where polling stopped.
        case paused(interval: Double, lastUpdate: Timestamp?, failures: Int)
    }

    /// Commands from the user, ticks from the timer and results from the fetch.
    public enum Event: Codable, Sendable, Equatable {
        /// Fetches now, then every `interval` seconds. Unhandled unless `interval` is positive.
        case startPolling(interval: Double)
        /// Stops fetching but remembers the interval and the last update.
        case pausePolling
        /// Fetches now and goes on at the remembered interval.
        case resumePolling
        /// Back to `idle`, forgetting everything.
        case stopPolling
        /// The timer fired: fetch, and arm the next tick.
        case tick
        /// A fetch succeeded.
        case dataUpdated(PolledData)
        /// A fetch failed.
        case fetchFailed(message: String)
    }

    /// The id of the timer that sends the next `.tick`: the state timeout of `polling`. (Before
    /// the port to state timeouts it was `"poll-tick"`; a record from then restores that timer,
    /// whose tick re-arms the state timeout.)
    public static let tickID: EffectID = .stateTimeout
    /// The id of the fetch in flight.
    public static let fetchID: EffectID = "poll-fetch"

    public static var initialState: State { .idle }

    /// The shortest and longest polling intervals, in seconds: a tenth of a second, and a year.
    /// Each tick fetches through io on another worker: one key polling every millisecond kept a
    /// core of a two-core machine busy across three processes.
    public static let intervals: ClosedRange<Double> = 0.1 ... 31_536_000

    /// An interval outside ``intervals`` (or not a number) is refused before it reaches
    /// `update`: one too long would overflow the timer's `Duration`, one too short would poll in
    /// a hot loop.
    public static func refusal(of event: Event) -> String? {
        guard case .startPolling(let interval) = event, !intervals.contains(interval) else { return nil }
        return "startPolling's interval is \(interval) s; it must be from \(intervals.lowerBound) s (a tenth of a second) "
            + "to \(Int(intervals.upperBound)) s (a year)"
    }

    /// The case: a `switch`, not the reflecting default, since every tick asks.
    public static func stateKey(_ state: State) -> String {
        switch state {
        case .idle: "idle"
        case .polling: "polling"
        case .paused: "paused"
        }
    }

    public static func update(_ state: inout State, event: Event) -> Effect {
        switch (state, event) {
        case (.idle, .startPolling(let interval)):
            guard intervals.contains(interval) else { return .unhandled }
            state = .polling(interval: interval, lastUpdate: nil, failures: 0)
            return poll(every: interval, since: nil)

        case (.polling(let interval, let lastUpdate, _), .tick):
            return poll(every: interval, since: lastUpdate)

        case (.polling(let interval, _, let failures), .dataUpdated(let data)):
            state = .polling(interval: interval, lastUpdate: data.updatedAt, failures: failures)
            return .none

        case (.polling(let interval, let lastUpdate, let failures), .fetchFailed):
            state = .polling(interval: interval, lastUpdate: lastUpdate, failures: failures + 1)
            return .none

        case (.polling(let interval, let lastUpdate, let failures), .pausePolling):
            state = .paused(interval: interval, lastUpdate: lastUpdate, failures: failures)
            return cancelPolling

        case (.paused(let interval, let lastUpdate, let failures), .resumePolling):
            state = .polling(interval: interval, lastUpdate: lastUpdate, failures: failures)
            return poll(every: interval, since: lastUpdate)

        case (.polling, .stopPolling), (.paused, .stopPolling):
            state = .idle
            return cancelPolling

        default:
            return .unhandled
        }
    }

    /// Fetches now and arms the next tick.
    static func poll(every interval: Double, since lastUpdate: Timestamp?) -> Effect {
        .merge([
            .stateTimeout(after: .seconds(interval), send: .tick),
            .io(id: fetchID, FetchData(since: lastUpdate)) { result in
                switch result {
                case .success(let data): .dataUpdated(data)
                case .failure(let failure): .fetchFailed(message: failure.message)
                }
            },
        ])
    }

    /// The id of the tick timer before the port to state timeouts: a record from then holds it.
    static let legacyTickID: EffectID = "poll-tick"

    /// The fetch in flight, and the tick of a record from before the port (leaving `polling`
    /// does not cancel it: its resume would fetch once too often); the state timeout goes with
    /// the state it was armed in.
    static var cancelPolling: Effect { .merge([.cancel(fetchID), .cancel(legacyTickID)]) }
}
