public import Grove

/// A signed-in user's background work, cancelled at logout: seed 002's "Conditional Cancellation"
/// (SwiftTea), whose `case .userLoggedOut` is the seed's text as written, in the reader's
/// ``TeaProgram`` around it.
///
/// Logging in starts three background operations under the seed's ids, ``userDataSync``,
/// ``notificationStream`` and ``analyticsUpload``, each a ``SessionWork`` request that, in a
/// topology, runs on the worker serving it. Logging out cancels all three by id, as the seed
/// writes it: their results, if they finish anyway, never arrive.
///
/// ```swift
/// let session = MachineHost(Tea<SessionFeature>.self, io: handlers)
/// session.start()
/// try session.send(.userLoggedIn)
/// try session.send(.userLoggedOut)   // cancels the three operations
/// ```
public enum SessionFeature: TeaProgram {
    /// Whether the user is signed in, and which operations finished.
    public struct State: Codable, Sendable, Equatable {
        /// `true` between `userLoggedIn` and `userLoggedOut`.
        public var isAuthenticated = false
        /// What the operations that finished reported, in the order they finished.
        public var finished: [String] = []

        public init(isAuthenticated: Bool = false, finished: [String] = []) {
            self.isAuthenticated = isAuthenticated
            self.finished = finished
        }
    }

    /// Signing in and out, and what the background operations report.
    public enum Action: Codable, Sendable, Equatable {
        /// Start the user's background operations.
        case userLoggedIn
        /// Cancel them all.
        case userLoggedOut
        /// An operation finished with this report.
        case workFinished(String)
        /// An operation failed.
        case workFailed(String)
    }

    /// The id of the sync of the user's data.
    public static let userDataSync: EffectID = "user-data-sync"
    /// The id of the user's notification stream.
    public static let notificationStream: EffectID = "notification-stream"
    /// The id of the upload of the user's analytics.
    public static let analyticsUpload: EffectID = "analytics-upload"

    public static var initialState: State { State() }

    public static func reduce(_ state: State, _ action: Action) -> (State, Effect) {
        switch action {
        case .userLoggedIn:
            guard !state.isAuthenticated else { return (state, .unhandled) }
            var newState = state
            newState.isAuthenticated = true
            return (newState, .merge([work(userDataSync), work(notificationStream), work(analyticsUpload)]))

        case .workFinished(let report):
            guard state.isAuthenticated else { return (state, .unhandled) }
            var newState = state
            newState.finished.append(report)
            return (newState, .none)

        case .workFailed(let message):
            guard state.isAuthenticated else { return (state, .unhandled) }
            var newState = state
            newState.finished.append("failed: \(message)")
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

    /// One background operation, as an io request under its own id.
    static func work(_ id: EffectID) -> Effect {
        .io(id: id, SessionWork(operation: id.description)) { result in
            switch result {
            case .success(let report): .workFinished(report)
            case .failure(let failure): .workFailed(failure.message)
            }
        }
    }
}

/// One of a signed-in user's background operations (``SessionFeature``), named by its effect id.
/// The in-memory handler (``ExampleHandlers/inMemory(items:accounts:lockedEmails:now:)``) takes
/// ``demoDuration`` to finish, so that logging out has something to cancel.
public struct SessionWork: IORequest, Hashable {
    /// What the operation reports when it finishes.
    public typealias Response = String

    /// `user-data-sync`, `notification-stream` or `analytics-upload`.
    public var operation: String

    /// - Parameter operation: The operation's effect id.
    public init(operation: String) { self.operation = operation }

    /// How long the demo's operations run before they finish.
    public static let demoDuration: Duration = .seconds(120)
}
