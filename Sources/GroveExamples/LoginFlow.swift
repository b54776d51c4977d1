public import Grove

/// The login transducer of Oak's *Understanding Finite State Machines*: pure, no effects, ending
/// in `completed`. Whoever drives it performs the authentication and reports the verdict with
/// `authenticationSucceeded` or `authenticationFailed`; ``AuthFlow`` is the variant that asks the
/// service itself.
///
/// ```swift
/// var state = LoginFlow.initialState
/// _ = LoginFlow.update(&state, event: .startLogin)
/// // state == .enteringCredentials(email: "", password: "")
/// ```
public enum LoginFlow: Machine {
    /// `completed` ends the run.
    public enum State: Codable, Sendable, Equatable, Terminable {
        /// Nothing happened yet.
        case start
        /// The user is typing an email and password.
        case enteringCredentials(email: String, password: String)
        /// The credentials were submitted; waiting for the driver's verdict.
        case authenticating(email: String, password: String)
        /// Signed in; `loginComplete` ends the run.
        case authenticated(User)
        /// Authentication failed; `startLogin` begins again.
        case failed(message: String)
        /// The login is over.
        case completed

        /// `true` for `completed`.
        public var isTerminal: Bool { self == .completed }
    }

    /// What the user does, and the verdict of whoever checks the credentials.
    public enum Event: Codable, Sendable, Equatable {
        /// Shows the credentials form, first or again after a failure.
        case startLogin
        /// The user typed an email address.
        case updateEmail(String)
        /// The user typed a password.
        case updatePassword(String)
        /// The user submitted the credentials.
        case submitCredentials
        /// The credentials are right.
        case authenticationSucceeded(User)
        /// The credentials are wrong, or could not be checked.
        case authenticationFailed(message: String)
        /// The signed-in user moves on; ends the run.
        case loginComplete
    }

    public static var initialState: State { .start }

    public static func update(_ state: inout State, event: Event) -> Effect {
        switch (state, event) {
        case (.start, .startLogin), (.failed, .startLogin):
            state = .enteringCredentials(email: "", password: "")

        case (.enteringCredentials(_, let password), .updateEmail(let email)):
            state = .enteringCredentials(email: email, password: password)

        case (.enteringCredentials(let email, _), .updatePassword(let password)):
            state = .enteringCredentials(email: email, password: password)

        case (.enteringCredentials(let email, let password), .submitCredentials):
            state = .authenticating(email: email, password: password)

        case (.authenticating, .authenticationSucceeded(let user)):
            state = .authenticated(user)

        case (.authenticating, .authenticationFailed(let message)):
            state = .failed(message: message)

        case (.authenticated, .loginComplete):
            state = .completed

        default:
            // The seed ignored invalid pairs silently; Grove reports them to the diagnostics hook.
            return .unhandled
        }
        return .none
    }
}
