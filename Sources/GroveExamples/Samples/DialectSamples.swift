public import Grove
public import GroveCheck

// Sample events and declared states of the SwiftTea, TCA-SM and StateMachinePackage examples, for
// `fsm-check`. Struct states are drawn by what the user sees. `LoadingStateMachine` is walked as
// its `StaticStateMachine`; its side effect never runs during a walk.

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

extension LocationTracker: Checkable {
    public typealias Checked = Tea<LocationTracker>

    public static var sampleEvents: [Action] {
        [.startLocationUpdates, .stopLocationUpdates, .locationUpdate(Location(latitude: 51.5, longitude: -0.1))]
    }

    public static var declaredStates: [State] { [State(), State(isTracking: true)] }

    public static func node(of state: State) -> String { state.isTracking ? "tracking" : "idle" }

    /// Each fix counts, without end.
    public static var maxDepth: Int? { 4 }
}

extension UserFeature: Checkable {
    public typealias Checked = Tea<UserFeature>

    public static var sampleEvents: [Action] {
        [.login(email: "ada@example.com", password: "analytical"), .logout, .userLoaded(.sample), .loginFailed("wrong password")]
    }

    public static var declaredStates: [State] {
        [State(), State(isLoggingIn: true), State(currentUser: .sample), State(errorMessage: "wrong password")]
    }

    public static func node(of state: State) -> String {
        if state.isLoggingIn { return "loggingIn" }
        if state.currentUser != nil { return "signedIn" }
        return state.errorMessage == nil ? "signedOut" : "failed"
    }
}

extension AppFeature: Checkable {
    public typealias Checked = Tea<AppFeature>

    public static var sampleEvents: [Action] {
        [.initializeApp, .preferencesLoaded(Preferences()), .preferencesFailed("offline")]
            + UserFeature.sampleEvents.map(Action.user)
    }

    public static var declaredStates: [State] {
        [State(), State(preferences: Preferences()), State(errorMessage: "offline"),
         State(user: UserFeature.State(currentUser: .sample), preferences: Preferences())]
    }

    /// The app's preferences and the user feature's node: `ready_signedIn`.
    public static func node(of state: State) -> String {
        let app = state.preferences != nil ? "ready" : state.errorMessage != nil ? "preferencesFailed" : "launching"
        return app + "_" + UserFeature.node(of: state.user)
    }

    public static func label(of event: Action) -> String {
        if case .user(let action) = event { return "user." + caseName(of: action) }
        return caseName(of: event)
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

extension DebouncedSearch: Checkable {
    public typealias Checked = Tea<DebouncedSearch>

    public static var sampleEvents: [Action] {
        [.queryChanged("oak"), .searchNow, .itemsLoaded(ExampleHandlers.demoItems), .loadFailed("offline")]
    }

    public static var declaredStates: [State] {
        [State(), State(query: "oak", isPending: true), State(query: "oak", matches: [DataItem(id: "1", title: "Oak")]),
         State(query: "oak", errorMessage: "offline")]
    }

    public static func node(of state: State) -> String {
        if state.isPending { return "pending" }
        if state.errorMessage != nil { return "failed" }
        return state.matches.isEmpty ? "empty" : "showingMatches"
    }

    /// Every search counts, without end.
    public static var maxDepth: Int? { 4 }
}

extension SearchFeature: Checkable {
    public typealias Checked = IOMachine<SearchFeature>

    public static var sampleEvents: [Checked.Event] {
        [.input(.search("oak")), .input(.clear), .ioResult(.results(["Oak"])), .ioResult(.searchFailed("offline"))]
    }

    public static var declaredStates: [State] { [.idle, .loading(query: ""), .loaded([])] }

    public static func label(of event: Checked.Event) -> String {
        switch event {
        case .input(let input): caseName(of: input)
        case .ioResult(let result): caseName(of: result)
        }
    }
}

/// `loading` is ``LoadingStateMachine``'s: this one awaits the load inside its transition and
/// never enters it, so it is not declared; the two result events, which only `loading` takes,
/// are unhandled everywhere. An id that is not a number fails to load (``LoadingStateMachine/Load/demo``).
extension AwaitingLoadingStateMachine: AwaitingCheckable {
    public typealias Program = AwaitingLoadingStateMachine

    public static var sampleEvents: [Event] {
        [.loadingWasRequested(id: "3"), .loadingWasRequested(id: "x"), .loadingHasSucceeded(value: 30),
         .loadingHasFailed(message: "offline")]
    }

    public static var declaredStates: [State] { [.idle, .loaded(value: 0), .failed(message: "")] }
}

extension LoadingStateMachine: Checkable {
    public typealias Checked = StaticStateMachine<LoadingStateMachine>

    public static var sampleEvents: [Event] {
        [.loadingWasRequested(id: "3"), .loadingHasSucceeded(value: 30), .loadingHasFailed(message: "offline")]
    }

    public static var declaredStates: [State] { [.idle, .loading, .loaded(value: 0), .failed(message: "")] }
}
