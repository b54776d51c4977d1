public import Grove

/// Searches a list of titles: TCA-SM's "State-Driven Cancellation" (seed 004), written as an
/// ``IOStateMachine`` with Codable types so that it runs on a worker.
///
/// A search while one is loading starts the new one; the old one is cancelled by the state
/// change, so its results never arrive. `clear` leaves `loading`, which cancels the search too.
/// The search runs on the feature's instance, with the ``search`` it was given: in this process
/// as ``IOMachine``, or as ``RemoteIOMachine`` on the worker whose io handlers hold the instance
/// (`IOHandlers.register(feature:)`), its ``IOEffect`` being the io request `SearchTitles`.
///
/// ```swift
/// let feature = MachineHost(IOMachine<SearchFeature>.self, env: SearchFeature { query in await api.titles(query) })
/// feature.start()
/// try feature.send(.input(.search("oak")))
/// ```
public struct SearchFeature: IOStateMachine {
    /// Where the search is.
    public enum State: Codable, Sendable, Equatable {
        /// Nothing searched, or cleared.
        case idle
        /// A search for `query` is in flight.
        case loading(query: String)
        /// The titles the last search found.
        case loaded([String])
    }

    /// What the user does.
    public enum Input: Codable, Sendable, Equatable {
        /// Search for a query, replacing a search in flight.
        case search(String)
        /// Back to `idle`; a search in flight is cancelled.
        case clear
    }

    /// The IO the feature performs.
    public enum IOEffect: Codable, Sendable, Equatable {
        /// Finds the titles matching a query.
        case search(String)
    }

    /// What the IO reports.
    public enum IOResult: Codable, Sendable, Equatable {
        /// The titles found.
        case results([String])
        /// The search produced no titles: it could not run, or its worker was lost.
        case searchFailed(String)
    }

    /// Finds the titles matching a query; the dependency the feature's instance carries.
    public let search: @Sendable (String) async -> [String]

    /// A feature searching with `search`.
    public init(search: @escaping @Sendable (String) async -> [String]) { self.search = search }

    /// A feature searching `titles` in memory, case-insensitively.
    public static func inMemory(_ titles: [String]) -> SearchFeature {
        SearchFeature { query in
            let needle = query.lowercased()
            return titles.filter { $0.lowercased().contains(needle) }
        }
    }

    public static var initialState: State { .idle }

    public static func reduceInput(_ state: State, _ input: Input) -> Transition {
        switch (state, input) {
        case (.loading, .search(let newQuery)):
            // Previous search implicitly cancelled by state change (the seed's text).
            transition(.loading(query: newQuery), effect: .search(newQuery))
        case (_, .search(let query)):
            transition(.loading(query: query), effect: .search(query))
        case (.loading, .clear), (.loaded, .clear):
            nextState(.idle)
        case (.idle, .clear):
            undefined
        }
    }

    public static func reduceIOResult(_ state: State, _ ioResult: IOResult) -> Transition {
        switch (state, ioResult) {
        case (.loading, .results(let titles)):
            nextState(.loaded(titles))
        case (.loading, .searchFailed):
            nextState(.idle)
        case (.idle, .results), (.loaded, .results), (.idle, .searchFailed), (.loaded, .searchFailed):
            undefined
        }
    }

    public func runIOEffect(_ ioEffect: IOEffect) async -> IOResult? {
        switch ioEffect {
        case .search(let query): .results(await search(query))
        }
    }
}

extension SearchFeature.IOEffect: IORequest {
    public typealias Response = SearchFeature.IOResult
    /// The name a topology places the search under.
    public static var name: String { "SearchTitles" }
}

extension SearchFeature: RemoteIOStateMachine {
    public static func ioFailed(_ effect: IOEffect, _ failure: IOFailure) -> IOResult {
        .searchFailed(failure.message)
    }
}
