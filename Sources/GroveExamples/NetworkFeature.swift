public import Foundation
public import Grove

/// What ``networkReducer(state:action:)`` keeps: the reader's type, which the seed leaves out.
public struct NetworkState: Sendable {
    /// `true` from `fetchData` until its result arrives.
    public var isLoading = false
    /// What the last successful fetch returned.
    public var data: Data?
    /// Why the last fetch failed; `nil` once a new fetch starts.
    public var error: (any Error)?

    public init(isLoading: Bool = false, data: Data? = nil, error: (any Error)? = nil) {
        self.isLoading = isLoading
        self.data = data
        self.error = error
    }
}

/// The service the seed's reducer calls statically: the reader's. The demo answers with
/// ``demoData`` at once; failures reach the reducer as `dataFetched(.failure(_))` (sent by a
/// client, or by a reader's service that throws).
public enum NetworkService {
    /// What the demo service returns.
    public static let demoData = Data("the latest news".utf8)

    /// Fetches the data.
    public static func fetchData() async throws -> Data { demoData }
}

/// SwiftTea's Result-based error handling as a ``TeaProgram``: the seed's free reducer,
/// ``networkReducer(state:action:)``, run by `Tea<NetworkFeature>`, so that it runs on a worker.
/// The fetch's outcome, success or error, comes back as one action, `dataFetched(Result)`.
///
/// ```swift
/// let network = MachineHost(Tea<NetworkFeature>.self)
/// network.start()
/// try network.send(.fetchData)
/// ```
public enum NetworkFeature: TeaProgram {
    public typealias State = NetworkState
    public typealias Action = NetworkAction

    public static var initialState: State { NetworkState() }

    public static func reduce(_ state: State, _ action: Action) -> (State, Effect) {
        networkReducer(state: state, action: action)
    }
}
