public import Grove
public import GroveCheck

// Sample events and declared states of the SwiftTea and TCA-SM examples, for `fsm-check`.
// `LoadingStateMachine` (StateMachinePackage) has none: its machine travels in its state and has
// no static initial state, so there is nothing to start a walk from.

extension Search: Checkable {
    public typealias Checked = Tea<Search>

    public static var sampleEvents: [Action] {
        [.search("oak"), .cancelSearch, .searchResults([SearchResult(id: "1", title: "Oak")]), .searchFailed("offline")]
    }

    public static var declaredStates: [State] {
        [State(), State(query: "oak", isSearching: true), State(query: "oak", results: [SearchResult(id: "1", title: "Oak")]),
         State(query: "oak", errorMessage: "offline")]
    }

    /// The state is a struct; it is drawn by what the user sees.
    public static func node(of state: State) -> String {
        if state.isSearching { return "searching" }
        if state.errorMessage != nil { return "failed" }
        return state.results.isEmpty ? "empty" : "showingResults"
    }
}

extension RetryingFeature: Checkable {
    public typealias Checked = IOMachine<RetryingFeature>

    public static var sampleEvents: [Checked.Event] {
        [.input(.start), .input(.cancel), .ioResult(.requestSucceeded("document")), .ioResult(.requestFailed("offline"))]
    }

    public static var declaredStates: [State] {
        [.idle, .active(retryCount: 0), .loaded(""), .failed(message: "", retryCount: 0)]
    }

    /// Events are drawn by the input or result they carry.
    public static func label(of event: Checked.Event) -> String {
        switch event {
        case .input(let input): caseName(of: input)
        case .ioResult(let result): caseName(of: result)
        }
    }
}
