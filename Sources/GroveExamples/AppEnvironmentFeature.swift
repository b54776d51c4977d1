public import Grove

/// The dependencies of ``AppFeature``: SwiftTea's "Using Environments for Dependency Injection".
///
/// The reducers never see the environment; only effect closures do, so the same program runs with
/// ``live`` services in the demo and with ``mock(accounts:preferences:track:)`` in tests.
/// ```swift
/// let app = MachineHost(Tea<AppFeature>.self, env: .live)
/// ```
public struct AppEnvironment: Sendable {
    /// Signs users in.
    public var api: API
    /// Keeps the user's preferences.
    public var dataStore: DataStore
    /// Records what the user did.
    public var analytics: Analytics

    public init(api: API, dataStore: DataStore, analytics: Analytics) {
        self.api = api
        self.dataStore = dataStore
        self.analytics = analytics
    }

    /// The backend's sign-in endpoint.
    public struct API: Sendable {
        /// Returns the user for an email and password; throws when they do not match.
        public var login: @Sendable (_ email: String, _ password: String) async throws -> User

        public init(login: @escaping @Sendable (_ email: String, _ password: String) async throws -> User) {
            self.login = login
        }
    }

    /// Where preferences live between launches.
    public struct DataStore: Sendable {
        /// The saved preferences.
        public var loadPreferences: @Sendable () async throws -> Preferences

        public init(loadPreferences: @escaping @Sendable () async throws -> Preferences) {
            self.loadPreferences = loadPreferences
        }
    }

    /// An analytics sink.
    public struct Analytics: Sendable {
        /// Records the named event.
        public var track: @Sendable (String) async -> Void

        public init(track: @escaping @Sendable (String) async -> Void) { self.track = track }
    }

    /// Why a sign-in was refused.
    public struct LoginRefused: Error, CustomStringConvertible {
        public var description: String { "wrong email or password" }
    }

    /// The services the demo runs with: the demo accounts of ``ExampleHandlers``, default
    /// preferences, and analytics that are dropped (the demo has no analytics backend).
    public static let live = mock(accounts: ExampleHandlers.demoAccounts)

    /// Services answering from memory, for tests.
    /// - Parameters:
    ///   - accounts: Who can sign in, and with which password.
    ///   - preferences: What the store returns; `nil` makes loading fail.
    ///   - track: Receives every analytics event.
    public static func mock(
        accounts: [ExampleHandlers.Account] = [],
        preferences: Preferences? = Preferences(),
        track: @escaping @Sendable (String) async -> Void = { _ in }
    ) -> AppEnvironment {
        AppEnvironment(
            api: API { email, password in
                guard let account = accounts.first(where: { $0.user.email == email && $0.password == password })
                else { throw LoginRefused() }
                return account.user
            },
            dataStore: DataStore {
                guard let preferences else { throw DataStoreEmpty() }
                return preferences
            },
            analytics: Analytics(track: track))
    }

    struct DataStoreEmpty: Error, CustomStringConvertible {
        var description: String { "no saved preferences" }
    }
}

/// What the user chose in settings.
public struct Preferences: Codable, Sendable, Hashable {
    /// The colour scheme's name.
    public var theme: String
    /// Whether the app may send notifications.
    public var notifications: Bool

    public init(theme: String = "system", notifications: Bool = true) {
        self.theme = theme
        self.notifications = notifications
    }
}

/// Signing in and out: a feature reducer that ``AppFeature`` composes, with only the ``AppEnvironment/API``
/// as its environment.
public enum UserFeature: TeaProgram {
    /// Who is signed in, and how the last attempt went.
    public struct State: Codable, Sendable, Equatable {
        /// The signed-in user.
        public var currentUser: User?
        /// `true` while a sign-in is in flight.
        public var isLoggingIn = false
        /// Why the last sign-in failed.
        public var errorMessage: String?

        public init(currentUser: User? = nil, isLoggingIn: Bool = false, errorMessage: String? = nil) {
            self.currentUser = currentUser
            self.isLoggingIn = isLoggingIn
            self.errorMessage = errorMessage
        }
    }

    /// What the user does, and what the API answers.
    public enum Action: Codable, Sendable, Equatable {
        /// Sign in, replacing a sign-in in flight.
        case login(email: String, password: String)
        /// Sign out, cancelling a sign-in in flight.
        case logout
        /// The API signed the user in.
        case userLoaded(User)
        /// The API refused or failed.
        case loginFailed(String)
    }

    public typealias Environment = AppEnvironment.API

    /// The id of the sign-in in flight.
    public static let loginID: EffectID = "login"

    public static var initialState: State { State() }

    public static func reduce(_ state: State, _ action: Action) -> (State, Effect) {
        var next = state
        switch action {
        case .login(let email, let password):
            next.isLoggingIn = true
            next.errorMessage = nil
            return (next, .cancellable({ api in .userLoaded(try await api.login(email, password)) },
                                       loginID, catch: { .loginFailed("\($0)") }))
        case .logout:
            next = State()
            return (next, .cancel(loginID))
        case .userLoaded(let user):
            guard state.isLoggingIn else { return (state, .unhandled) }
            next.currentUser = user
            next.isLoggingIn = false
            return (next, .none)
        case .loginFailed(let message):
            guard state.isLoggingIn else { return (state, .unhandled) }
            next.isLoggingIn = false
            next.errorMessage = message
            return (next, .none)
        }
    }
}

/// An app made of features, running on an injected ``AppEnvironment``: SwiftTea's environment,
/// feature-organisation and action-composition patterns.
///
/// `initializeApp` loads preferences, then records the launch: a Grove sequence runs its steps one
/// after another, so `app_launched` is tracked only once preferences arrived (SwiftTea's sequence
/// ran them at once). User actions go to ``UserFeature``, whose effect is lifted with
/// `.map(Action.user)` and `.pullback(\.api)`; a successful sign-in is also tracked.
public enum AppFeature: TeaProgram {
    /// The app's features' states.
    public struct State: Codable, Sendable, Equatable {
        /// Sign-in state.
        public var user = UserFeature.State()
        /// Loaded preferences; `nil` until loaded.
        public var preferences: Preferences?
        /// Why loading preferences failed.
        public var errorMessage: String?

        public init(user: UserFeature.State = UserFeature.State(), preferences: Preferences? = nil,
                    errorMessage: String? = nil) {
            self.user = user
            self.preferences = preferences
            self.errorMessage = errorMessage
        }
    }

    /// App-level actions and the features' actions.
    public enum Action: Codable, Sendable, Equatable {
        /// Load what the app needs at launch.
        case initializeApp
        /// The store answered.
        case preferencesLoaded(Preferences)
        /// The store failed.
        case preferencesFailed(String)
        /// An action of the user feature.
        case user(UserFeature.Action)
    }

    public typealias Environment = AppEnvironment

    public static var initialState: State { State() }

    public static func reduce(_ state: State, _ action: Action) -> (State, Effect) {
        var next = state
        switch action {
        case .initializeApp:
            return (state, .sequence([
                .task({ env in .preferencesLoaded(try await env.dataStore.loadPreferences()) },
                      catch: { .preferencesFailed("\($0)") }),
                .task { env in
                    await env.analytics.track("app_launched")
                    return nil
                },
            ]))
        case .preferencesLoaded(let preferences):
            next.preferences = preferences
            next.errorMessage = nil
            return (next, .none)
        case .preferencesFailed(let message):
            next.errorMessage = message
            return (next, .none)
        case .user(let userAction):
            let (user, userEffect) = UserFeature.reduce(state.user, userAction)
            if case .unhandled = userEffect { return (state, .unhandled) }
            next.user = user
            let lifted = userEffect.map(Action.user).pullback(\AppEnvironment.api)
            guard case .userLoaded = userAction else { return (next, lifted) }
            return (next, .merge([lifted, .task { env in
                await env.analytics.track("login")
                return nil
            }]))
        }
    }
}
