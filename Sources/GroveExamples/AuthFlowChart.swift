public import Grove

/// ``AuthFlow`` written as a ``Statechart``: the same states, events and outputs, with the
/// sign-in steps nested under `signingIn` and the second factor's under `twoFactor`:
///
/// ```
/// signedOut                      unauthenticated
/// signingIn                      logout (cancels everything), accountLocked
///   credentials                  enteringCredentials
///   authenticating               enter: 30 s to answer; exit: cancel the request;
///                                the code's events postponed
///   failed                       authenticationFailed
///   twoFactor                    enter: 5 minutes for the code, then the sign-in is abandoned
///     awaitingCode               requiresTwoFactor
///     enteringCode               enteringTwoFactor
///     verifying                  enter: the VerifyTwoFactor request; exit: cancel it;
///                                the code's events postponed
/// signedIn                       authenticated; enter: emits signedIn; logout
/// locked                         terminal
/// ```
///
/// What the hierarchy replaces: `logout` and the service's `accountLocked` are written once on
/// `signingIn` instead of on every step (`AuthFlow` needs a `(_, .logout)` catch-all and a
/// `default:`); the code's deadline is one state timeout of `twoFactor`, which moving between
/// its three steps keeps; the verification starts in `verifying`'s enter action, so the
/// transitions into it (a submit, a retry after an unreachable service) do not repeat it.
///
/// Postpone (`gen_statem`'s): a code typed or submitted (`updateTwoFactorCode`,
/// `submitTwoFactor`) while the password is checked, before the service asks for it, is kept
/// until the step changes and then delivered again, in order: after the prompt the code is
/// entered and sent at once; after a sign-in without a second factor, a failure or a logout,
/// the step it lands in does not take it and it is dropped (reported as unhandled). The same
/// while a code is checked: another code typed and submitted then is tried once the answer
/// is known, unless that answer signs the user in. A worker keeps postponed events across a
/// restart.
///
/// Differences from ``AuthFlow``, which its tests (`AuthFlowTests`, run on both) do not see:
/// - A request that gets no answer in 30 s counts as an unreachable service (not an attempt):
///   `authenticating`'s state timeout.
/// - A second factor not completed within five minutes of the password logs the sign-in out.
/// - A machine started afresh in `authenticated` (not restored) emits `signedIn` at start.
/// - `accountLocked` locks from any sign-in step, not only while a request is in flight.
/// - The code's events while a password or a code is checked are postponed, not unhandled.
public enum AuthFlowChart: SignInChart {
    public typealias State = AuthFlow.State
    public typealias Event = AuthFlow.Event
    public typealias Output = AuthFlow.Output

    /// The levels of the sign-in.
    public enum Node: String, Hashable, Sendable, CaseIterable {
        case signedOut, signingIn, credentials, authenticating, failed
        case twoFactor, awaitingCode, enteringCode, verifying
        case signedIn, locked
    }

    /// How long the service has to answer a password before it counts as unreachable.
    public static let answerDeadline: Duration = .seconds(30)
    /// How long the user has, from the password's acceptance, to complete the second factor.
    public static let codeDeadline: Duration = .seconds(300)
}

/// ``AuthFlowChart``'s machine with its two deadlines left to the type that conforms:
/// ``AuthFlowChart`` gives the real ones; Grove's end-to-end tests give shorter ones to see a
/// deadline fire on a worker in seconds (`fsm-worker --with-test-machines`). Everything else,
/// below, is the one statechart both run.
public protocol SignInChart: Statechart
where State == AuthFlow.State, Event == AuthFlow.Event, Output == AuthFlow.Output, Node == AuthFlowChart.Node {
    /// How long the service has to answer a password before it counts as unreachable
    /// (`authenticating`'s state timeout).
    static var answerDeadline: Duration { get }
    /// How long the user has, from the password's acceptance, to complete the second factor
    /// (`twoFactor`'s state timeout, kept across its three steps).
    static var codeDeadline: Duration { get }
}

extension SignInChart {
    public static var initialState: State { State() }

    public static func parent(of node: Node) -> Node? {
        switch node {
        case .signedOut, .signingIn, .signedIn, .locked: nil
        case .credentials, .authenticating, .failed, .twoFactor: .signingIn
        case .awaitingCode, .enteringCode, .verifying: .twoFactor
        }
    }

    public static func leaves(of state: State) -> [Node] {
        switch state.step {
        case .unauthenticated: [.signedOut]
        case .enteringCredentials: [.credentials]
        case .authenticating: [.authenticating]
        case .authenticationFailed: [.failed]
        case .requiresTwoFactor: [.awaitingCode]
        case .enteringTwoFactor: [.enteringCode]
        case .verifyingTwoFactor: [.verifying]
        case .authenticated: [.signedIn]
        case .locked: [.locked]
        }
    }

    /// Each node's events; what a node does not take goes to its parent (`.unhandled`).
    public static func handle(_ event: Event, in node: Node, state: inout State) -> Effect {
        switch node {
        case .signedOut: signedOut(event, &state)
        case .signingIn: signingIn(event, &state)
        case .credentials: credentials(event, &state)
        case .authenticating: authenticating(event, &state)
        case .failed: failed(event, &state)
        case .twoFactor: twoFactor(event, &state)
        case .enteringCode: enteringCode(event, &state)
        case .verifying: verifying(event, &state)
        case .signedIn: signedIn(event, &state)
        case .awaitingCode, .locked: .unhandled
        }
    }

    private static func signedOut(_ event: Event, _ state: inout State) -> Effect {
        guard case .startLogin = event else { return .unhandled }
        state.step = .enteringCredentials(email: "", password: "")
        return .none
    }

    /// Every sign-in step: the service's lock, and logout, which cancels whatever is in flight.
    private static func signingIn(_ event: Event, _ state: inout State) -> Effect {
        switch event {
        case .accountLocked:
            state.step = .locked
            return .none
        case .logout:
            state.step = .unauthenticated
            return .cancelAll
        case .startLogin, .updateEmail, .updatePassword, .login, .authenticationSucceeded, .authenticationFailed,
             .twoFactorRequired, .updateTwoFactorCode, .submitTwoFactor, .twoFactorVerified, .twoFactorFailed, .retry:
            return .unhandled
        }
    }

    private static func credentials(_ event: Event, _ state: inout State) -> Effect {
        guard case .enteringCredentials(let email, let password) = state.step else { return .unhandled }
        switch event {
        case .updateEmail(let email):
            state.step = .enteringCredentials(email: email, password: password)
            return .none
        case .updatePassword(let password):
            state.step = .enteringCredentials(email: email, password: password)
            return .none
        case .login:
            state.step = .authenticating(email: email)
            return AuthFlow.authenticate(email: email, password: password)
        case .startLogin, .authenticationSucceeded, .authenticationFailed, .twoFactorRequired, .updateTwoFactorCode,
             .submitTwoFactor, .twoFactorVerified, .twoFactorFailed, .retry, .logout, .accountLocked:
            return .unhandled
        }
    }

    private static func authenticating(_ event: Event, _ state: inout State) -> Effect {
        guard case .authenticating(let email) = state.step else { return .unhandled }
        switch event {
        case .authenticationSucceeded(let user):
            state.step = .authenticated(user)
            state.failedAttempts = 0
            return .none
        case .twoFactorRequired(let token):
            state.step = .requiresTwoFactor(token: token, email: email)
            return .none
        case .authenticationFailed(.rejected(let message)):
            countFailure(&state, otherwise: .authenticationFailed(email: email, message: message, canRetry: true))
            return .none
        case .authenticationFailed(.unavailable(let message, let canRetry)):
            state.step = .authenticationFailed(email: email, message: message, canRetry: canRetry)
            return .none
        case .updateTwoFactorCode, .submitTwoFactor:
            // A code typed before the prompt: kept for the step the password leads to.
            return .postpone
        case .startLogin, .updateEmail, .updatePassword, .login, .twoFactorVerified, .twoFactorFailed, .retry,
             .logout, .accountLocked:
            return .unhandled
        }
    }

    private static func failed(_ event: Event, _ state: inout State) -> Effect {
        guard case .retry = event, case .authenticationFailed(let email, _, canRetry: true) = state.step else {
            return .unhandled
        }
        state.step = .enteringCredentials(email: email, password: "")
        return .none
    }

    /// Typing the code, in any of the second factor's steps but while it is checked.
    private static func twoFactor(_ event: Event, _ state: inout State) -> Effect {
        guard case .updateTwoFactorCode(let code) = event else { return .unhandled }
        switch state.step {
        case .requiresTwoFactor(let token, let email), .enteringTwoFactor(let token, let email, _):
            state.step = .enteringTwoFactor(token: token, email: email, code: code)
            return .none
        case .unauthenticated, .enteringCredentials, .authenticating, .verifyingTwoFactor, .authenticated,
             .authenticationFailed, .locked:
            return .unhandled
        }
    }

    private static func enteringCode(_ event: Event, _ state: inout State) -> Effect {
        guard case .submitTwoFactor = event, case .enteringTwoFactor(let token, let email, let code) = state.step else {
            return .unhandled
        }
        state.step = .verifyingTwoFactor(token: token, email: email, code: code)
        return .none   // `verifying`'s enter sends the code
    }

    private static func verifying(_ event: Event, _ state: inout State) -> Effect {
        guard case .verifyingTwoFactor(let token, let email, let code) = state.step else { return .unhandled }
        switch event {
        case .twoFactorVerified(let user):
            state.step = .authenticated(user)
            state.failedAttempts = 0
            return .none
        case .twoFactorFailed(.rejected):
            countFailure(&state, otherwise: .requiresTwoFactor(token: token, email: email))
            return .none
        case .twoFactorFailed(.unavailable):
            // Nothing was judged: keep the code so the user can send it again.
            state.step = .enteringTwoFactor(token: token, email: email, code: code)
            return .none
        case .updateTwoFactorCode, .submitTwoFactor:
            // Another code while this one is checked: kept until the answer, then typed over it.
            return .postpone
        case .startLogin, .updateEmail, .updatePassword, .login, .authenticationSucceeded, .authenticationFailed,
             .twoFactorRequired, .retry, .logout, .accountLocked:
            return .unhandled
        }
    }

    private static func signedIn(_ event: Event, _ state: inout State) -> Effect {
        guard case .logout = event else { return .unhandled }
        state.step = .unauthenticated
        return .cancelAll
    }

    public static func enter(_ node: Node, state: State) -> Effect {
        switch (node, state.step) {
        case (.authenticating, _):
            let late = AuthFlow.Failure.unavailable(message: "the service did not answer in time", canRetry: true)
            return .stateTimeout(after: answerDeadline, in: .authenticating, send: .authenticationFailed(late))
        case (.twoFactor, _):
            return .stateTimeout(after: codeDeadline, in: .twoFactor, send: .logout)
        case (.verifying, .verifyingTwoFactor(let token, _, let code)):
            return AuthFlow.verify(token: token, code: code)
        case (.signedIn, .authenticated(let user)):
            return .output(.signedIn(user))
        case (.signedOut, _), (.signingIn, _), (.credentials, _), (.failed, _), (.awaitingCode, _), (.enteringCode, _),
             (.verifying, _), (.signedIn, _), (.locked, _):
            return .none
        }
    }

    public static func exit(_ node: Node, state: State) -> Effect {
        switch node {
        case .authenticating: .cancel(AuthFlow.authenticateID)
        case .verifying: .cancel(AuthFlow.verifyID)
        case .signedOut, .signingIn, .credentials, .failed, .twoFactor, .awaitingCode, .enteringCode, .signedIn, .locked:
            .none
        }
    }

    /// Counts a wrong password or code: locks the account at the limit, else moves to `next`.
    private static func countFailure(_ state: inout State, otherwise next: AuthFlow.Step) {
        state.failedAttempts += 1
        state.step = state.failedAttempts >= state.maxAttempts ? .locked : next
    }
}
