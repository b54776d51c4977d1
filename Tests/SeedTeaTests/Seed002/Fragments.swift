// Seed 002, SwiftTea's "Advanced Patterns": the four fragments "Automatic Cancellation with
// Replacement", "Cancellation with Effect Sequences", "Effect Composition" and "Conditional
// Cancellation". Each is a `case` of a reducer the seed does not show; the `case` bodies are the
// seed's text, and around each the reader's reducer, state and actions, so it can run. The
// reader's parts are everything outside the lines between `// Seed text` and `// End of seed text`.
import Grove
import GroveTea

/// Automatic Cancellation with Replacement: a new query replaces the search in flight.
func replacingSearchReducer(state: SearchState, action: SearchAction) -> (SearchState, Effect<SearchAction>) {
    switch action {
// Seed text
case .search(let newQuery):
var newState = state
newState.query = newQuery
newState.isSearching = true

// Starting a new search automatically cancels any existing "search" effect
return (newState, .cancellable({
let results = try await SearchService.search(newQuery)
return .searchResults(results)
}, "search"))
// End of seed text
    default:
        return searchReducer(state: state, action: action)
    }
}

enum SequencedSearchAction: Sendable {
    case startNewSearch(String)
    case searchResults([SearchResult])
}

struct SequencedSearchState: Sendable {
    var searchQuery = ""
    var isSearching = false
    var results: [SearchResult] = []
}

/// Cancellation with Effect Sequences: cancel, then start under the same id.
func sequencedSearchReducer(state: SequencedSearchState, action: SequencedSearchAction)
    -> (SequencedSearchState, Effect<SequencedSearchAction>) {
    switch action {
// Seed text
case .startNewSearch(let query):
var newState = state
newState.searchQuery = query
newState.isSearching = true

return (newState, .sequence([
.cancel("previous-search"),
.cancellable({
let results = try await SearchService.search(query)
return .searchResults(results)
}, "previous-search")
]))
// End of seed text
    case .searchResults(let results):
        var newState = state
        newState.results = results
        newState.isSearching = false
        return (newState, .none)
    }
}

enum LaunchAction: Sendable, Equatable {
    case initializeApp
    case loadUserPreferences
    case checkForUpdates
    case initializeAnalytics
}

/// Effect Composition: three tasks at launch; the state records the actions they sent, in order.
func launchReducer(state: [LaunchAction], action: LaunchAction) -> ([LaunchAction], Effect<LaunchAction>) {
    switch action {
// Seed text
case .initializeApp:
return (state, .sequence([
.task { .loadUserPreferences },
.task { .checkForUpdates },
.task { .initializeAnalytics }
]))
// End of seed text
    case .loadUserPreferences, .checkForUpdates, .initializeAnalytics:
        return (state + [action], .none)
    }
}

enum SessionAction: Sendable {
    case userLoggedIn
    case userLoggedOut
    case synced
}

struct SessionState: Sendable {
    var isAuthenticated = false
    var syncs = 0
}

/// Conditional Cancellation: logging out cancels the three background operations logging in
/// started. The operations wait on `SessionWork` until the test lets them finish.
func sessionReducer(state: SessionState, action: SessionAction) -> (SessionState, Effect<SessionAction>) {
    switch action {
    case .userLoggedIn:
        var newState = state
        newState.isAuthenticated = true
        return (newState, .merge([
            .cancellable({ try await SessionWork.gate.wait(); return .synced }, "user-data-sync"),
            .cancellable({ try await SessionWork.gate.wait(); return .synced }, "notification-stream"),
            .cancellable({ try await SessionWork.gate.wait(); return .synced }, "analytics-upload"),
        ]))
    case .synced:
        var newState = state
        newState.syncs += 1
        return (newState, .none)
// Seed text
case .userLoggedOut:
var newState = state
newState.isAuthenticated = false

// Cancel all user-related background operations
return (newState, .sequence([
.cancel("user-data-sync"),
.cancel("notification-stream"),
.cancel("analytics-upload")
]))
// End of seed text
    }
}
