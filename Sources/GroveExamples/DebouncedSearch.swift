public import Grove

/// Searches the item catalogue as the user types, once typing pauses: SwiftTea's "Debouncing"
/// pattern, written as a ``TeaProgram`` whose timer is `.after` and whose fetch is an `.io`
/// request, so that in a topology the fetch runs on the worker serving ``FetchItems``.
///
/// Each keystroke (`queryChanged`) restarts the timer under ``debounceID``: only the last query
/// of a burst is searched, ``debounce`` after it was typed. The search fetches the items under
/// ``fetchID`` and keeps those whose title contains the query. A keystroke cancels a fetch in
/// flight: its items, for an older query, never arrive.
///
/// ```swift
/// let search = MachineHost(Tea<DebouncedSearch>.self, io: ExampleHandlers.inMemory())
/// search.start()
/// try search.send(.queryChanged("oak"))
/// ```
public enum DebouncedSearch: TeaProgram {
    /// The query, whether a search is due or running, and what the last search found.
    public struct State: Codable, Sendable, Equatable {
        /// What the user typed last.
        public var query = ""
        /// `true` from a keystroke until its search has answered.
        public var isPending = false
        /// The items of the last search whose title contains its query.
        public var matches: [DataItem] = []
        /// How many searches ran (debounced keystrokes do not count).
        public var searches = 0
        /// Why the last search failed; `nil` after a success.
        public var errorMessage: String?

        public init(query: String = "", isPending: Bool = false, matches: [DataItem] = [], searches: Int = 0,
                    errorMessage: String? = nil) {
            self.query = query
            self.isPending = isPending
            self.matches = matches
            self.searches = searches
            self.errorMessage = errorMessage
        }
    }

    /// What the user types, and what the timer and the fetch report.
    public enum Action: Codable, Sendable, Equatable {
        /// The user typed; the search waits for a pause.
        case queryChanged(String)
        /// The pause is over: search for the current query.
        case searchNow
        /// The fetch answered with the catalogue.
        case itemsLoaded([DataItem])
        /// The fetch failed.
        case loadFailed(String)
    }

    /// How long typing must pause before a search.
    public static let debounce: Duration = .milliseconds(300)
    /// The id of the pending timer, restarted by every keystroke.
    public static let debounceID: EffectID = "debounce"
    /// The id of the fetch in flight.
    public static let fetchID: EffectID = "fetch"

    public static var initialState: State { State() }

    /// Its ``FetchItems`` re-issues: a durable search restored while fetching fetches again.
    public static var startsReissuableIO: Bool { true }

    public static func reduce(_ state: State, _ action: Action) -> (State, Effect) {
        var next = state
        switch action {
        case .queryChanged(let query):
            next.query = query
            next.isPending = true
            // The same id: a keystroke replaces the timer of the one before.
            return (next, .merge([.cancel(fetchID), .after(debounce, id: debounceID, send: .searchNow)]))

        case .searchNow:
            guard state.isPending else { return (state, .unhandled) }
            next.searches += 1
            return (next, .io(id: fetchID, FetchItems(forceRefresh: false)) { result in
                switch result {
                case .success(let items): .itemsLoaded(items)
                case .failure(let failure): .loadFailed(failure.message)
                }
            })

        case .itemsLoaded(let items):
            guard state.isPending else { return (state, .unhandled) }
            let needle = state.query.lowercased()
            next.matches = items.filter { needle.isEmpty || $0.title.lowercased().contains(needle) }
            next.isPending = false
            next.errorMessage = nil
            return (next, .none)

        case .loadFailed(let message):
            guard state.isPending else { return (state, .unhandled) }
            next.errorMessage = message
            next.isPending = false
            return (next, .none)
        }
    }
}
