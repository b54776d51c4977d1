public import Grove

/// A search box: the "Cancellable Operations" and "Automatic Cancellation with Replacement"
/// patterns of SwiftTea's *Advanced Patterns*, written as a ``TeaProgram``.
///
/// Every search runs under the id ``searchID``. Typing a new query while a search is in flight
/// replaces it: the old search is cancelled and its results, even if it finishes anyway, never
/// arrive. `cancelSearch` cancels the search in flight.
///
/// ```swift
/// let search = MachineHost(Tea<Search>.self, env: .inMemory(catalog))
/// search.start()
/// try search.send(.search("oak"))
/// ```
public enum Search: TeaProgram {
    /// The query, whether a search is in flight, and what the last search found.
    public struct State: Codable, Sendable, Equatable {
        /// The query last searched for.
        public var query = ""
        /// `true` while a search is in flight.
        public var isSearching = false
        /// The results of the last search that finished.
        public var results: [SearchResult] = []
        /// Why the last search failed; `nil` after a success or a new search.
        public var errorMessage: String?

        public init(query: String = "", isSearching: Bool = false, results: [SearchResult] = [],
                    errorMessage: String? = nil) {
            self.query = query
            self.isSearching = isSearching
            self.results = results
            self.errorMessage = errorMessage
        }
    }

    /// What the user does, and what the search reports.
    public enum Action: Codable, Sendable, Equatable {
        /// Search for the query, replacing a search in flight.
        case search(String)
        /// Cancel the search in flight.
        case cancelSearch
        /// The search finished.
        case searchResults([SearchResult])
        /// The search failed.
        case searchFailed(String)
    }

    /// The search service.
    public struct Environment: Sendable {
        /// Finds what matches a query.
        public var search: @Sendable (String) async throws -> [SearchResult]

        public init(search: @escaping @Sendable (String) async throws -> [SearchResult]) {
            self.search = search
        }

        /// A service that answers at once from `catalog`, matching titles case-insensitively.
        public static func inMemory(_ catalog: [SearchResult]) -> Environment {
            Environment { query in
                let needle = query.lowercased()
                return catalog.filter { $0.title.lowercased().contains(needle) }
            }
        }
    }

    /// The id of the search in flight.
    public static let searchID: EffectID = "search"

    public static var initialState: State { State() }

    public static func reduce(_ state: State, _ action: Action) -> (State, Effect) {
        var next = state
        switch action {
        case .search(let query):
            next.query = query
            next.isSearching = true
            next.errorMessage = nil
            // Starting a search under the same id cancels the one in flight.
            return (next, .cancellable({ env in .searchResults(try await env.search(query)) },
                                       searchID, catch: { .searchFailed("\($0)") }))

        case .cancelSearch:
            guard state.isSearching else { return (state, .unhandled) }
            next.isSearching = false
            return (next, .cancel(searchID))

        case .searchResults(let results):
            guard state.isSearching else { return (state, .unhandled) }
            next.results = results
            next.isSearching = false
            return (next, .none)

        case .searchFailed(let message):
            guard state.isSearching else { return (state, .unhandled) }
            next.errorMessage = message
            next.isSearching = false
            return (next, .none)
        }
    }
}

/// One thing a ``Search`` found.
public struct SearchResult: Codable, Sendable, Hashable, Identifiable {
    /// Stable identity of the result.
    public var id: String
    /// What the result list shows.
    public var title: String

    public init(id: String, title: String) {
        self.id = id
        self.title = title
    }
}
