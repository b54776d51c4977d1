public import Grove

/// Sign-in with email and password, an optional second factor, lockout and logout: the
/// "Authentication Flow" pattern of Oak's *Common Patterns*. Credentials and codes go to the
/// authentication service as Codable ``Authenticate`` and ``VerifyTwoFactor`` requests, which may
/// run on another worker.
///
/// When a user is authenticated, with or without a second factor, the machine emits
/// ``Output/signedIn(_:)`` with that user, so a topology can route a successful sign-in to another
/// machine.
///
/// Differences from the seed, and why:
/// - Only `locked` is terminal. The seed also made `authenticated` terminal yet handled `logout`
///   from it, which no host can deliver: a terminal state refuses later events. A signed-in
///   session lasts until `logout`, which returns to `unauthenticated`.
/// - Failed attempts are counted in the state (``State/failedAttempts``) and the account locks
///   after ``State/maxAttempts`` of them. Wrong passwords and wrong second-factor codes both
///   count, so codes cannot be guessed either. A service that cannot be reached does not count.
///   Logging out in the middle of a sign-in keeps the count, so it cannot be used to reset it; a
///   successful sign-in resets it.
/// - `authenticating` forgets the password: the request carries it, and states may be
///   snapshotted, journaled or shown to watchers.
/// - `logout` is accepted in every step but `unauthenticated`, and returns `.cancelAll`: it
///   cancels every request the session started, such as a sign-in still in flight.
///
/// ```swift
/// let auth = MachineHost(AuthFlow.self, initialState: AuthFlow.State(maxAttempts: 5), io: handlers)
/// auth.start()
/// for event in [.startLogin, .updateEmail("ada@example.com"), .updatePassword("…"), .login] as [AuthFlow.Event] {
///     try auth.send(event)
/// }
/// ```
public enum AuthFlow: Machine {
    /// The step of the sign-in, and the lockout counter that spans steps.
    public struct State: Codable, Sendable, Equatable, Terminable {
        /// Where the sign-in is.
        public var step: Step
        /// Wrong passwords and codes since the last successful sign-in.
        public var failedAttempts: Int
        /// How many failed attempts lock the account.
        public var maxAttempts: Int

        /// - Parameters:
        ///   - step: Where the sign-in starts.
        ///   - failedAttempts: Failed attempts already made.
        ///   - maxAttempts: How many failed attempts lock the account; at least 1.
        public init(
            step: Step = .unauthenticated, failedAttempts: Int = 0, maxAttempts: Int = AuthFlow.defaultMaxAttempts
        ) {
            self.step = step
            self.failedAttempts = failedAttempts
            self.maxAttempts = max(1, maxAttempts)
        }

        /// `true` once the account is locked.
        public var isTerminal: Bool { step == .locked }
    }

    /// The steps of the seed's flow.
    public enum Step: Codable, Sendable, Equatable {
        /// Signed out; `startLogin` begins.
        case unauthenticated
        /// The user is typing an email and password.
        case enteringCredentials(email: String, password: String)
        /// The ``Authenticate`` request is in flight.
        case authenticating(email: String)
        /// The password was right; the user must enter the code sent to them.
        case requiresTwoFactor(token: String, email: String)
        /// The user is typing the code.
        case enteringTwoFactor(token: String, email: String, code: String)
        /// The ``VerifyTwoFactor`` request is in flight.
        case verifyingTwoFactor(token: String, email: String, code: String)
        /// Signed in, until `logout`.
        case authenticated(User)
        /// The last attempt failed; `canRetry` is `false` when the same request would fail again.
        case authenticationFailed(email: String, message: String, canRetry: Bool)
        /// Too many failed attempts, or the service locked the account. Ends the run.
        case locked
    }

    /// Why a password or code was not accepted.
    public enum Failure: Codable, Sendable, Equatable {
        /// The service judged the password or code wrong: counts toward the lockout.
        case rejected(message: String)
        /// The service could not answer: does not count. `canRetry` is `false` when the same
        /// request would fail again (no handler, codec error).
        case unavailable(message: String, canRetry: Bool)
    }

    /// What the user does, and what the authentication service reports.
    public enum Event: Codable, Sendable, Equatable {
        /// Shows the credentials form.
        case startLogin
        /// The user typed an email address.
        case updateEmail(String)
        /// The user typed a password.
        case updatePassword(String)
        /// Sends the credentials.
        case login
        /// The service accepted the credentials; no second factor is needed.
        case authenticationSucceeded(User)
        /// The service rejected the credentials, or could not be asked.
        case authenticationFailed(Failure)
        /// The service accepted the credentials and asks for a code.
        case twoFactorRequired(token: String)
        /// The user typed a code.
        case updateTwoFactorCode(String)
        /// Sends the code.
        case submitTwoFactor
        /// The service accepted the code.
        case twoFactorVerified(User)
        /// The service rejected the code, or could not be asked.
        case twoFactorFailed(Failure)
        /// Enter credentials again after a retryable failure.
        case retry
        /// Ends the session, or abandons the sign-in, cancelling everything in flight.
        case logout
        /// The service locked the account.
        case accountLocked
    }

    /// What the machine tells the rest of a topology.
    public enum Output: Codable, Sendable, Equatable {
        /// A user was authenticated: emitted once per successful sign-in, on entering `authenticated`.
        case signedIn(User)
    }

    /// Failed attempts that lock the account when the state does not say otherwise.
    public static let defaultMaxAttempts = 3
    /// The id of the ``Authenticate`` request in flight.
    public static let authenticateID: EffectID = "authenticate"
    /// The id of the ``VerifyTwoFactor`` request in flight.
    public static let verifyID: EffectID = "verify-two-factor"

    public static var initialState: State { State() }

    public static func update(_ state: inout State, event: Event) -> Effect {
        switch (state.step, event) {
        case (.unauthenticated, .startLogin):
            state.step = .enteringCredentials(email: "", password: "")
            return .none

        case (.enteringCredentials(_, let password), .updateEmail(let email)):
            state.step = .enteringCredentials(email: email, password: password)
            return .none

        case (.enteringCredentials(let email, _), .updatePassword(let password)):
            state.step = .enteringCredentials(email: email, password: password)
            return .none

        case (.enteringCredentials(let email, let password), .login):
            state.step = .authenticating(email: email)
            return authenticate(email: email, password: password)

        case (.authenticating, .authenticationSucceeded(let user)),
             (.verifyingTwoFactor, .twoFactorVerified(let user)):
            state.step = .authenticated(user)
            state.failedAttempts = 0
            return .output(.signedIn(user))

        case (.authenticating(let email), .twoFactorRequired(let token)):
            state.step = .requiresTwoFactor(token: token, email: email)
            return .none

        case (.authenticating(let email), .authenticationFailed(.rejected(let message))):
            countFailure(&state, otherwise: .authenticationFailed(email: email, message: message, canRetry: true))
            return .none

        case (.authenticating(let email), .authenticationFailed(.unavailable(let message, let canRetry))):
            state.step = .authenticationFailed(email: email, message: message, canRetry: canRetry)
            return .none

        case (.authenticating, .accountLocked), (.verifyingTwoFactor, .accountLocked):
            state.step = .locked
            return .none

        case (.requiresTwoFactor(let token, let email), .updateTwoFactorCode(let code)),
             (.enteringTwoFactor(let token, let email, _), .updateTwoFactorCode(let code)):
            state.step = .enteringTwoFactor(token: token, email: email, code: code)
            return .none

        case (.enteringTwoFactor(let token, let email, let code), .submitTwoFactor):
            state.step = .verifyingTwoFactor(token: token, email: email, code: code)
            return verify(token: token, code: code)

        case (.verifyingTwoFactor(let token, let email, _), .twoFactorFailed(.rejected)):
            countFailure(&state, otherwise: .requiresTwoFactor(token: token, email: email))
            return .none

        case (.verifyingTwoFactor(let token, let email, let code), .twoFactorFailed(.unavailable)):
            // Nothing was judged: keep the code so the user can send it again.
            state.step = .enteringTwoFactor(token: token, email: email, code: code)
            return .none

        case (.authenticationFailed(let email, _, canRetry: true), .retry):
            state.step = .enteringCredentials(email: email, password: "")
            return .none

        case (.unauthenticated, .logout), (.locked, _):
            return .unhandled

        case (_, .logout):
            state.step = .unauthenticated
            return .cancelAll

        default:
            return .unhandled
        }
    }

    /// Counts a wrong password or code: locks the account at the limit, else moves to `next`.
    private static func countFailure(_ state: inout State, otherwise next: Step) {
        state.failedAttempts += 1
        state.step = state.failedAttempts >= state.maxAttempts ? .locked : next
    }

    /// The sign-in request, for this machine and for ``AuthFlowChart``, which shares its events.
    static func authenticate<M: Machine>(email: String, password: String) -> MachineEffect<M> where M.Event == Event {
        .io(id: authenticateID, Authenticate(email: email, password: password)) { result in
            switch result {
            case .success(.authenticated(let user)): .authenticationSucceeded(user)
            case .success(.twoFactorRequired(let token)): .twoFactorRequired(token: token)
            case .success(.invalidCredentials(let message)): .authenticationFailed(.rejected(message: message))
            case .success(.accountLocked): .accountLocked
            case .failure(let failure):
                .authenticationFailed(.unavailable(message: failure.message, canRetry: failure.isRetryable))
            }
        }
    }

    /// The second factor's request, for this machine and for ``AuthFlowChart``.
    static func verify<M: Machine>(token: String, code: String) -> MachineEffect<M> where M.Event == Event {
        .io(id: verifyID, VerifyTwoFactor(token: token, code: code)) { result in
            switch result {
            case .success(.verified(let user)): .twoFactorVerified(user)
            case .success(.invalidCode(let message)): .twoFactorFailed(.rejected(message: message))
            case .failure(let failure):
                .twoFactorFailed(.unavailable(message: failure.message, canRetry: failure.isRetryable))
            }
        }
    }
}

extension AuthFlow.State: Redacting {
    /// The state with the password, the two-factor token and the code replaced by
    /// ``Redaction/placeholder``: what a worker replies and publishes. The email and the step
    /// stay, and so does an empty field, so a form can still show what is left to type.
    public var redacted: Self {
        var copy = self
        let hidden = Redaction.hiding
        switch step {
        case .enteringCredentials(let email, let password):
            copy.step = .enteringCredentials(email: email, password: hidden(password))
        case .requiresTwoFactor(let token, let email):
            copy.step = .requiresTwoFactor(token: hidden(token), email: email)
        case .enteringTwoFactor(let token, let email, let code):
            copy.step = .enteringTwoFactor(token: hidden(token), email: email, code: hidden(code))
        case .verifyingTwoFactor(let token, let email, let code):
            copy.step = .verifyingTwoFactor(token: hidden(token), email: email, code: hidden(code))
        case .unauthenticated, .authenticating, .authenticated, .authenticationFailed, .locked:
            break
        }
        return copy
    }
}

extension AuthFlow.Event: Redacting {
    /// The event with the password, the two-factor token and the code replaced by
    /// ``Redaction/placeholder``: what an audit log writes. An empty field stays empty.
    public var redacted: Self {
        let hidden = Redaction.hiding
        switch self {
        case .updatePassword(let password): return .updatePassword(hidden(password))
        case .updateTwoFactorCode(let code): return .updateTwoFactorCode(hidden(code))
        case .twoFactorRequired(let token): return .twoFactorRequired(token: hidden(token))
        case .startLogin, .updateEmail, .login, .authenticationSucceeded, .authenticationFailed, .submitTwoFactor,
             .twoFactorVerified, .twoFactorFailed, .retry, .logout, .accountLocked:
            return self
        }
    }
}
