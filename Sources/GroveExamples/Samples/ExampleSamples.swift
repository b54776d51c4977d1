import Foundation
public import Grove
public import GroveCheck

// Sample events and declared states of the Oak examples, for `fsm-check` and
// `StateGraph.explore`. One sample per event case at least; payloads chosen so that every
// branch of `update` can be taken (a valid and an invalid form, a retryable and a final failure).

extension User {
    /// The user the samples sign in.
    static let sample = User(id: "u-ada", name: "Ada Lovelace", email: "ada@example.com")
}

extension LoginFlow: Checkable {
    public typealias Checked = OakTransducer<LoginFlow>

    public static var sampleEvents: [Event] {
        [.startLogin, .updateEmail("ada@example.com"), .updatePassword("analytical"), .submitCredentials,
         .authenticationSucceeded(.sample), .authenticationFailed(Failure("wrong password")), .loginComplete]
    }

    public static var declaredStates: [State] {
        [.start, .enteringCredentials(email: "", password: ""), .authenticating(email: "", password: ""),
         .authenticated(.sample), .failed(Failure("")), .completed]
    }
}

extension AuthFlow: Checkable {
    public typealias Checked = AuthFlow

    public static var sampleEvents: [Event] {
        [.startLogin, .updateEmail("ada@example.com"), .updatePassword("analytical"), .login,
         .authenticationSucceeded(.sample), .authenticationFailed(.rejected(message: "wrong password")),
         .authenticationFailed(.unavailable(message: "offline", canRetry: true)),
         .twoFactorRequired(token: "t-1"), .updateTwoFactorCode("424242"), .submitTwoFactor,
         .twoFactorVerified(.sample), .twoFactorFailed(.rejected(message: "wrong code")),
         .retry, .logout, .accountLocked]
    }

    public static var declaredStates: [State] {
        [Step.unauthenticated, .enteringCredentials(email: "", password: ""), .authenticating(email: ""),
         .requiresTwoFactor(token: "", email: ""), .enteringTwoFactor(token: "", email: "", code: ""),
         .verifyingTwoFactor(token: "", email: "", code: ""), .authenticated(.sample),
         .authenticationFailed(email: "", message: "", canRetry: true), .locked].map { State(step: $0) }
    }

    /// States are drawn by their step; the attempt counter is part of the walk, not of the picture.
    public static func node(of state: State) -> String { caseName(of: state.step) }
}

extension AuthFlowChart: Checkable {
    public typealias Checked = AuthFlowChart

    public static var sampleEvents: [Event] { AuthFlow.sampleEvents }
    public static var declaredStates: [State] { AuthFlow.declaredStates }

    /// States are drawn by their leaf (`verifying`), inside their levels (`signingIn`,
    /// `twoFactor`), which fsm-check reads from ``parent(of:)``.
    public static func node(of state: State) -> String { leaves(of: state).map { String(describing: $0) }.joined(separator: "|") }
}

extension UserForm: Checkable {
    public typealias Checked = UserForm

    public static var sampleEvents: [Event] {
        [.updateName("Ada Lovelace"), .updateEmail("ada@example.com"), .updatePhone("+44 20 7946 0958"),
         .validate, .validationComplete([]), .validationComplete([.invalidEmail]), .submit,
         .submissionComplete(.accepted(confirmation: "FORM-1")), .cancel]
    }

    public static var declaredStates: [State] {
        [.editing(FormData(), errors: []), .validating(FormData()), .submitting(FormData()),
         .submitted(result: .accepted(confirmation: "")), .cancelled]
    }
}

extension DataLoader: Checkable {
    public typealias Checked = DataLoader

    public static var sampleEvents: [Event] {
        [.load, .reload, .dataReceived(ExampleHandlers.demoItems), .loadFailed(message: "offline", canRetry: true),
         .loadFailed(message: "gone", canRetry: false), .retry, .dismiss]
    }

    public static var declaredStates: [State] {
        [.idle, .loading, .loaded([]), .error(message: "", canRetry: true)]
    }
}

extension PollingService: Checkable {
    public typealias Checked = PollingService

    public static var sampleEvents: [Event] {
        [.startPolling(interval: 30), .pausePolling, .resumePolling, .stopPolling, .tick,
         .dataUpdated(PolledData(sequence: 1, updatedAt: Timestamp(sinceEpoch: .seconds(1)), body: "update 1")),
         .fetchFailed(message: "offline")]
    }

    public static var declaredStates: [State] {
        [.idle, .polling(interval: 30, lastUpdate: nil, failures: 0), .paused(interval: 30, lastUpdate: nil, failures: 0)]
    }

    /// Each failed fetch counts, without end.
    public static var maxDepth: Int? { 6 }
}

extension BufferedConnection: Checkable {
    public typealias Checked = BufferedConnection

    public static var sampleEvents: [Event] {
        [.connect, .linkUp, .linkDown, .send("hello"), .dialTimedOut, .retry]
    }

    public static var declaredStates: [State] {
        [.offline, .connecting(attempt: 1), .backingOff(attempt: 1), .online(sent: [])]
    }

    /// Each send online grows what was sent, without end.
    public static var maxDepth: Int? { 6 }
}

extension AppNavigator: Checkable {
    public typealias Checked = AppNavigator

    public static var sampleEvents: [Event] {
        [.navigate(.settings), .push(.detail(ExampleHandlers.demoItems[0])), .pop, .presentModal(.login),
         .dismissModal, .reset]
    }

    public static var declaredStates: [State] { [initialState] }

    /// The stack grows with every push.
    public static var maxDepth: Int? { 4 }
}

extension PollingLoop: Checkable {
    public typealias Checked = Oak<PollingLoop>

    public static var sampleEvents: [Event] {
        [.startPolling(interval: 30), .pausePolling, .resumePolling, .stopPolling, .tick,
         .dataUpdated(Data("update 1".utf8), at: Date(timeIntervalSince1970: 1_700_000_000))]
    }

    public static var declaredStates: [State] {
        [.idle, .polling(interval: 30, lastUpdate: nil), .paused(interval: 30, lastUpdate: nil)]
    }
}
