import Foundation
public import Grove
public import GroveCheck

// Sample events and declared states of seed 002's examples brought from its text (SwiftTea's
// Result-based actions, retry logic and conditional cancellation), for `fsm-check`. Struct states
// are drawn by what the user sees.

extension NetworkFeature: Checkable {
    public typealias Checked = Tea<NetworkFeature>

    public static var sampleEvents: [Action] {
        [.fetchData, .dataFetched(.success(NetworkService.demoData)), .dataFetched(.failure(NetworkFailure("offline")))]
    }

    public static var declaredStates: [State] {
        [State(), State(isLoading: true), State(data: NetworkService.demoData), State(error: NetworkFailure("offline"))]
    }

    public static func node(of state: State) -> String {
        if state.isLoading { return "loading" }
        if state.error != nil { return "failed" }
        return state.data == nil ? "idle" : "loaded"
    }

    /// Results are drawn by their outcome: `dataFetched.success`.
    public static func label(of event: Action) -> String {
        switch event {
        case .fetchData: "fetchData"
        case .dataFetched(.success): "dataFetched.success"
        case .dataFetched(.failure): "dataFetched.failure"
        }
    }
}

extension RetryableFetch: Checkable {
    public typealias Checked = Tea<RetryableFetch>

    public static var sampleEvents: [Action] { [.fetch(failingAttempts: 2), .fetched("fetched on attempt 3")] }

    public static var declaredStates: [State] {
        [State(), State(isLoading: true), State(document: "fetched on attempt 3")]
    }

    public static func node(of state: State) -> String {
        if state.isLoading { return "fetching" }
        return state.document == nil ? "idle" : "fetched"
    }
}

extension SessionFeature: Checkable {
    public typealias Checked = Tea<SessionFeature>

    public static var sampleEvents: [Action] {
        [.userLoggedIn, .userLoggedOut, .workFinished("user-data-sync done"), .workFailed("offline")]
    }

    public static var declaredStates: [State] { [State(), State(isAuthenticated: true)] }

    public static func node(of state: State) -> String { state.isAuthenticated ? "signedIn" : "signedOut" }

    /// Each finished operation counts, without end.
    public static var maxDepth: Int? { 4 }
}
