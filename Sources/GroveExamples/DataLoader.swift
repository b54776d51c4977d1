public import Grove

/// Loads a list of items, with clear loading and error states, retry and reload: the "Loading
/// Data" pattern of Oak's *Common Patterns*, with the fetch as a Codable ``FetchItems`` request so
/// it can run on another worker.
///
/// Every fetch runs under the id ``fetchID``: a `reload` while a fetch is in flight replaces it,
/// and the replaced fetch never delivers its (stale) result.
///
/// ```swift
/// var handlers = IOHandlers()
/// handlers.register(FetchItems.self) { request in try await api.items(fresh: request.forceRefresh) }
/// let loader = MachineHost(DataLoader.self, io: handlers)
/// loader.start()
/// try loader.send(.load)
/// ```
public enum DataLoader: Machine {
    /// Where the loader is. The loader never ends: after an error the user retries or dismisses.
    public enum State: Codable, Sendable, Equatable, NonTerminal {
        /// Nothing loaded yet, or an error was dismissed.
        case idle
        /// A fetch is in flight.
        case loading
        /// The last fetch succeeded.
        case loaded([DataItem])
        /// The last fetch failed. `canRetry` is `false` when the same request would fail again.
        case error(message: String, canRetry: Bool)
    }

    /// What the user asks for, and what the fetch reports.
    public enum Event: Codable, Sendable, Equatable {
        /// Load for the first time (from `idle`).
        case load
        /// Fetch fresh data, from `loaded` or while a fetch is in flight (which it replaces).
        case reload
        /// The fetch succeeded.
        case dataReceived([DataItem])
        /// The fetch failed.
        case loadFailed(message: String, canRetry: Bool)
        /// Try again after a retryable error.
        case retry
        /// Acknowledge an error and go back to `idle`.
        case dismiss
    }

    /// The id of the fetch in flight.
    public static let fetchID: EffectID = "fetch-items"

    public static var initialState: State { .idle }

    /// Its ``FetchItems`` re-issues: a durable loader restored while fetching fetches again.
    public static var startsReissuableIO: Bool { true }

    public static func update(_ state: inout State, event: Event) -> Effect {
        switch (state, event) {
        case (.idle, .load), (.error(_, canRetry: true), .retry):
            state = .loading
            return fetch(forceRefresh: false)

        case (.loaded, .reload), (.loading, .reload):
            state = .loading
            return fetch(forceRefresh: true)

        case (.loading, .dataReceived(let items)):
            state = .loaded(items)
            return .none

        case (.loading, .loadFailed(let message, let canRetry)):
            state = .error(message: message, canRetry: canRetry)
            return .none

        case (.error, .dismiss):
            state = .idle
            return .none

        default:
            return .unhandled
        }
    }

    static func fetch(forceRefresh: Bool) -> Effect {
        .io(id: fetchID, FetchItems(forceRefresh: forceRefresh)) { result in
            switch result {
            case .success(let items): .dataReceived(items)
            case .failure(let failure): .loadFailed(message: failure.message, canRetry: failure.isRetryable)
            }
        }
    }
}
