// Seed 002, SwiftTea's "Advanced Patterns": "Cancellable Operations", as written.
// Only the imports are added; `SearchState`, `SearchResult` and `SearchService` are the reader's,
// in Support/ReaderTypes.swift.
import Grove
import GroveTea

enum SearchAction: Sendable {
case search(String)
case cancelSearch
case searchResults([SearchResult])
}

func searchReducer(state: SearchState, action: SearchAction) -> (SearchState, Effect<SearchAction>) {
switch action {
case .search(let query):
var newState = state
newState.isSearching = true

return (newState, .cancellable({
let results = try await SearchService.search(query)
return .searchResults(results)
}, "search"))

case .cancelSearch:
var newState = state
newState.isSearching = false
// Cancel the effect declaratively from the reducer
return (newState, .cancel("search"))

case .searchResults(let results):
var newState = state
newState.results = results
newState.isSearching = false
return (newState, .none)
}
}
