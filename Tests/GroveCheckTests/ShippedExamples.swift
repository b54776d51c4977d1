import GroveCheck
import GroveExamples
import GroveTesting
import Testing

/// Every shipped example fsm-check knows (its catalog, Sources/FSMCheck), by name.
enum ShippedExamples {
    static let names = [
        "LoginFlow", "AuthFlow", "AuthFlowChart", "UserForm", "DataLoader", "PollingService", "BufferedConnection", "AppNavigator", "Search",
        "LocationTracker", "UserFeature", "AppFeature", "RetryingFeature", "DebouncedSearch", "SearchFeature",
        "LoadingStateMachine", "PurchaseFeature", "UserPostsFeature", "CacheFeature", "AuthenticateFeature",
        "PollingLoop", "NetworkFeature", "RetryableFetch", "SessionFeature", "AwaitingLoadingStateMachine",
    ]

    /// The walk of each example, as `StateGraph.explore` gives it.
    static let graphs: [String: @Sendable () async -> StateGraph] = [
        "LoginFlow": { StateGraph.explore(LoginFlow.self) },
        "AuthFlow": { StateGraph.explore(AuthFlow.self) },
        "AuthFlowChart": { StateGraph.explore(AuthFlowChart.self) },
        "UserForm": { StateGraph.explore(UserForm.self) },
        "DataLoader": { StateGraph.explore(DataLoader.self) },
        "PollingService": { StateGraph.explore(PollingService.self) },
        "BufferedConnection": { StateGraph.explore(BufferedConnection.self) },
        "AppNavigator": { StateGraph.explore(AppNavigator.self) },
        "Search": { StateGraph.explore(Search.self) },
        "LocationTracker": { StateGraph.explore(LocationTracker.self) },
        "UserFeature": { StateGraph.explore(UserFeature.self) },
        "AppFeature": { StateGraph.explore(AppFeature.self) },
        "RetryingFeature": { StateGraph.explore(RetryingFeature.self) },
        "DebouncedSearch": { StateGraph.explore(DebouncedSearch.self) },
        "SearchFeature": { StateGraph.explore(SearchFeature.self) },
        "LoadingStateMachine": { StateGraph.explore(LoadingStateMachine.self) },
        "PurchaseFeature": { StateGraph.explore(PurchaseFeature.self) },
        "UserPostsFeature": { StateGraph.explore(UserPostsFeature.self) },
        "CacheFeature": { StateGraph.explore(CacheFeature.self) },
        "AuthenticateFeature": { StateGraph.explore(AuthenticateFeature.self) },
        "PollingLoop": { StateGraph.explore(PollingLoop.self) },
        "NetworkFeature": { StateGraph.explore(NetworkFeature.self) },
        "RetryableFetch": { StateGraph.explore(RetryableFetch.self) },
        "SessionFeature": { StateGraph.explore(SessionFeature.self) },
        "AwaitingLoadingStateMachine": { await StateGraph.explore(awaiting: AwaitingLoadingStateMachine.self) },
    ]

    /// The test kit's expectation on each example, unhandled pairs allowed (Grove machines say
    /// `.unhandled` on purpose): any other finding records an issue.
    static let expectations: [String: @Sendable () async -> StateGraph] = [
        "LoginFlow": { expectCompleteStateGraph(LoginFlow.self, allowUnhandled: true, allowFallThrough: true) },
        "AuthFlow": { expectCompleteStateGraph(AuthFlow.self, allowUnhandled: true, allowFallThrough: true) },
        "AuthFlowChart": { expectCompleteStateGraph(AuthFlowChart.self, allowUnhandled: true, allowFallThrough: true) },
        "UserForm": { expectCompleteStateGraph(UserForm.self, allowUnhandled: true, allowFallThrough: true) },
        "DataLoader": { expectCompleteStateGraph(DataLoader.self, allowUnhandled: true, allowFallThrough: true) },
        "PollingService": { expectCompleteStateGraph(PollingService.self, allowUnhandled: true, allowFallThrough: true) },
        "BufferedConnection": { expectCompleteStateGraph(BufferedConnection.self, allowUnhandled: true, allowFallThrough: true) },
        "AppNavigator": { expectCompleteStateGraph(AppNavigator.self, allowUnhandled: true, allowFallThrough: true) },
        "Search": { expectCompleteStateGraph(Search.self, allowUnhandled: true, allowFallThrough: true) },
        "LocationTracker": { expectCompleteStateGraph(LocationTracker.self, allowUnhandled: true, allowFallThrough: true) },
        "UserFeature": { expectCompleteStateGraph(UserFeature.self, allowUnhandled: true, allowFallThrough: true) },
        "AppFeature": { expectCompleteStateGraph(AppFeature.self, allowUnhandled: true, allowFallThrough: true) },
        "RetryingFeature": { expectCompleteStateGraph(RetryingFeature.self, allowUnhandled: true, allowFallThrough: true) },
        "DebouncedSearch": { expectCompleteStateGraph(DebouncedSearch.self, allowUnhandled: true, allowFallThrough: true) },
        "SearchFeature": { expectCompleteStateGraph(SearchFeature.self, allowUnhandled: true, allowFallThrough: true) },
        "LoadingStateMachine": { expectCompleteStateGraph(LoadingStateMachine.self, allowUnhandled: true, allowFallThrough: true) },
        "PurchaseFeature": { expectCompleteStateGraph(PurchaseFeature.self, allowUnhandled: true, allowFallThrough: true) },
        "UserPostsFeature": { expectCompleteStateGraph(UserPostsFeature.self, allowUnhandled: true, allowFallThrough: true) },
        "CacheFeature": { expectCompleteStateGraph(CacheFeature.self, allowUnhandled: true, allowFallThrough: true) },
        "AuthenticateFeature": { expectCompleteStateGraph(AuthenticateFeature.self, allowUnhandled: true, allowFallThrough: true) },
        "PollingLoop": { expectCompleteStateGraph(PollingLoop.self, allowUnhandled: true, allowFallThrough: true) },
        "NetworkFeature": { expectCompleteStateGraph(NetworkFeature.self, allowUnhandled: true, allowFallThrough: true) },
        "RetryableFetch": { expectCompleteStateGraph(RetryableFetch.self, allowUnhandled: true, allowFallThrough: true) },
        "SessionFeature": { expectCompleteStateGraph(SessionFeature.self, allowUnhandled: true, allowFallThrough: true) },
        "AwaitingLoadingStateMachine": { await expectCompleteStateGraph(awaiting: AwaitingLoadingStateMachine.self, allowUnhandled: true, allowFallThrough: true) },
    ]
}
