public import Grove

/// The login transducer of Oak's *Understanding Finite State Machines*, as the seed writes it: an
/// effect-free ``Transducer`` whose `update` returns nothing, ending in `completed`. Run it as
/// `OakTransducer<LoginFlow>`; workers register it under the name `LoginFlow`.
///
/// Whoever drives it performs the authentication and reports the verdict with
/// `authenticationSucceeded` or `authenticationFailed`; ``AuthFlow`` is the variant that asks the
/// service itself. As in the seed, a pair with no transition is ignored (`default: break`): the
/// state stays and nothing is reported.
///
/// Beyond the seed's text: `public`, `Sendable`, `any Error` for `Error` (this package's
/// modules enable `ExistentialAny`), and, in `LoginFlow+Coding.swift`, `Codable` and
/// `Equatable`, so that instances cross processes and tests compare states. Errors travel as
/// their description and arrive as a ``LoginFlow/Failure``.
///
/// ```swift
/// var state = LoginFlow.State.start
/// LoginFlow.update(&state, event: .startLogin)
/// // state is .enteringCredentials(email: "", password: "")
/// ```
public enum LoginFlow: Transducer {
    // Explicit state definition
    public enum State: Terminable, Sendable {
        /// Nothing happened yet.
        case start
        /// The user is typing an email and password.
        case enteringCredentials(email: String, password: String)
        /// The credentials were submitted; waiting for the driver's verdict.
        case authenticating(email: String, password: String)
        /// Signed in; `loginComplete` ends the run.
        case authenticated(User)
        /// Authentication failed; `startLogin` begins again.
        case failed(any Error)
        /// The login is over.
        case completed

        /// `true` for `completed`.
        public var isTerminal: Bool {
            if case .completed = self { return true }
            return false
        }
    }

    // All possible events
    public enum Event: Sendable {
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
        case authenticationFailed(any Error)
        /// The signed-in user moves on; ends the run.
        case loginComplete
    }

    /// An error that crossed a process boundary, or any error a driver wants to report by text:
    /// what `failed` and `authenticationFailed` hold after decoding.
    public struct Failure: Error, Codable, Sendable, Hashable, CustomStringConvertible {
        /// What went wrong, for people.
        public var message: String

        /// A failure saying `message`.
        public init(_ message: String) { self.message = message }

        public var description: String { message }
    }

    /// The seed leaves the start to the reader (`var state = LoginFlow.State.start`); Grove's hosts
    /// need it named.
    public static var initialState: State { .start }

    // Pure transition function
    public static func update(_ state: inout State, event: Event) -> Void {
        switch (state, event) {
        case (.start, .startLogin):
            state = .enteringCredentials(email: "", password: "")

        case (.enteringCredentials(_, let password), .updateEmail(let email)):
            state = .enteringCredentials(email: email, password: password)

        case (.enteringCredentials(let email, _), .updatePassword(let password)):
            state = .enteringCredentials(email: email, password: password)

        case (.enteringCredentials(let email, let password), .submitCredentials):
            state = .authenticating(email: email, password: password)

        case (.authenticating, .authenticationSucceeded(let user)):
            state = .authenticated(user)

        case (.authenticating, .authenticationFailed(let error)):
            state = .failed(error)

        case (.authenticated, .loginComplete):
            state = .completed

        case (.failed, .startLogin):
            state = .enteringCredentials(email: "", password: "")

        default:
            // Invalid transitions are explicitly ignored
            break
        }
    }
}
