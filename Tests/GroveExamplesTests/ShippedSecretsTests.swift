import Grove
import GroveExamples
import Testing

/// Issue 34, item 5: every shipped machine that holds a password or a token redacts it, in its
/// state and in its events, and keeps what is not secret.
@Suite("Shipped machines' secrets", .timeLimit(.minutes(2)))
struct ShippedSecretsTests {
    static let hidden = Redaction.placeholder

    @Test func loginFlowHidesThePassword() {
        #expect(LoginFlow.State.enteringCredentials(email: "a@b", password: "pw").redacted
                == .enteringCredentials(email: "a@b", password: Self.hidden))
        #expect(LoginFlow.State.authenticating(email: "a@b", password: "pw").redacted == .authenticating(email: "a@b", password: Self.hidden))
        #expect(LoginFlow.State.enteringCredentials(email: "a@b", password: "").redacted == .enteringCredentials(email: "a@b", password: ""))
        #expect(LoginFlow.State.start.redacted == .start)
        #expect(LoginFlow.Event.updatePassword("pw").redacted == .updatePassword(Self.hidden))
        #expect(LoginFlow.Event.updateEmail("a@b").redacted == .updateEmail("a@b"))
    }

    @Test func userPostsFeatureHidesThePasswordAndTheToken() {
        let user = User(id: "1", name: "Ada", email: "a@b")
        #expect(UserPostsFeature.State.fetchingUser(token: .init("t-1")).redacted == .fetchingUser(token: .init(Self.hidden)))
        #expect(UserPostsFeature.State.fetchingPosts(user: user, token: .init("t-1")).redacted
                == .fetchingPosts(user: user, token: .init(Self.hidden)))
        #expect(UserPostsFeature.Input.start(email: "a@b", password: "pw").redacted == .start(email: "a@b", password: Self.hidden))
        #expect(UserPostsFeature.IOResult.token(.init("t-1")).redacted == .token(.init(Self.hidden)))
        #expect(Redaction.applies(to: IOMachine<UserPostsFeature>.Event.self))
    }

    @Test func signInActionsHideThePassword() {
        #expect(AuthenticateFeature.Input.signIn(username: "a", password: "pw").redacted == .signIn(username: "a", password: Self.hidden))
        #expect(UserFeature.Action.login(email: "a@b", password: "pw").redacted == .login(email: "a@b", password: Self.hidden))
        #expect(AppFeature.Action.user(.login(email: "a@b", password: "pw")).redacted == .user(.login(email: "a@b", password: Self.hidden)))
        #expect(AppFeature.Action.initializeApp.redacted == .initializeApp)
    }
}
