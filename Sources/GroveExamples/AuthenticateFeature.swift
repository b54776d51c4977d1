public import Grove

/// Signs a user in with one IO effect that hides two calls: TCA-SM's "Effect Abstraction"
/// (seed 004), written as an ``IOStateMachine`` with Codable types so that it runs on a worker.
///
/// The reducer knows one semantic effect, `authenticate`; ``runIOEffect(_:)`` orchestrates the
/// login and the profile fetch behind it, and either failing is `authFailed`.
///
/// ```swift
/// let auth = MachineHost(IOMachine<AuthenticateFeature>.self, env: AuthenticateFeature(api: .live))
/// auth.start()
/// try auth.send(.input(.signIn(username: "ada@example.com", password: "analytical")))
/// ```
public struct AuthenticateFeature: IOStateMachine {
    /// Who is signed in.
    public enum State: Codable, Sendable, Equatable {
        /// Nobody.
        case signedOut
        /// The authenticate effect is in flight.
        case authenticating
        /// Signed in, with the profile fetched.
        case signedIn(User)
        /// The last sign-in failed; signing in again is allowed.
        case failed
    }

    /// What the user does.
    public enum Input: Codable, Sendable, Equatable {
        /// Sign in, from `signedOut` or after a failure.
        case signIn(username: String, password: String)
        /// Sign out; a sign-in in flight is cancelled with its state.
        case signOut
    }

    /// The seed's effect: one, not a step per call.
    public enum IOEffect: Codable, Sendable, Hashable {
        /// Log in and fetch the profile.
        case authenticate(username: String, password: String)
    }

    /// What the orchestration reports.
    public enum IOResult: Codable, Sendable, Equatable {
        /// Both steps succeeded.
        case authenticated(User)
        /// Either step failed.
        case authFailed
    }

    /// The two calls the effect orchestrates; `nil` means the step failed.
    public struct API: Sendable {
        /// Returns a session token for the credentials.
        public var login: @Sendable (_ username: String, _ password: String) async -> String?
        /// Returns the profile of the token's user.
        public var fetchProfile: @Sendable (_ token: String) async -> User?

        public init(login: @escaping @Sendable (String, String) async -> String?,
                    fetchProfile: @escaping @Sendable (String) async -> User?) {
            self.login = login
            self.fetchProfile = fetchProfile
        }

        /// The demo accounts of ``ExampleHandlers``: a token is `token-` and the user's id.
        public static let demo = API(
            login: { username, password in
                ExampleHandlers.demoAccounts.first { $0.user.email == username && $0.password == password }
                    .map { "token-\($0.user.id)" }
            },
            fetchProfile: { token in
                ExampleHandlers.demoAccounts.first { "token-\($0.user.id)" == token }?.user
            })
    }

    /// The feature's dependency.
    public let api: API

    public init(api: API) { self.api = api }

    public static var initialState: State { .signedOut }

    public static func reduceInput(_ state: State, _ input: Input) -> Transition {
        switch (state, input) {
        case (.signedOut, .signIn(let username, let password)), (.failed, .signIn(let username, let password)):
            transition(.authenticating, effect: .authenticate(username: username, password: password))
        case (.authenticating, .signOut), (.signedIn, .signOut), (.failed, .signOut):
            nextState(.signedOut)
        case (.authenticating, .signIn), (.signedIn, .signIn), (.signedOut, .signOut):
            undefined
        }
    }

    public static func reduceIOResult(_ state: State, _ ioResult: IOResult) -> Transition {
        switch (state, ioResult) {
        case (.authenticating, .authenticated(let user)): nextState(.signedIn(user))
        case (.authenticating, .authFailed): nextState(.failed)
        case (.signedOut, _), (.signedIn, _), (.failed, _): undefined   // no sign-in in flight
        }
    }

    public func runIOEffect(_ effect: IOEffect) async -> IOResult? {
        switch effect {
        case .authenticate(let user, let pass):
            // Seed 004: "Complex orchestration hidden behind simple interface".
            guard let token = await api.login(user, pass) else {
                return .authFailed
            }
            guard let profile = await api.fetchProfile(token) else {
                return .authFailed
            }
            return .authenticated(profile)
        }
    }
}
