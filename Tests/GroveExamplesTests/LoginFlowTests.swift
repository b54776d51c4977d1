import Grove
import GroveExamples
import GroveRuntime
import GroveTesting
import Testing

@Suite("LoginFlow", .timeLimit(.minutes(2)))
struct LoginFlowTests {
    private let user = User(id: "u-ada", name: "Ada Lovelace", email: "ada@example.com")

    @Test("the seed's walk from start to completed; every step is effect-free")
    func happyPath() {
        var state = LoginFlow.initialState
        let steps: [(LoginFlow.Event, LoginFlow.State)] = [
            (.startLogin, .enteringCredentials(email: "", password: "")),
            (.updateEmail("ada@example.com"), .enteringCredentials(email: "ada@example.com", password: "")),
            (.updatePassword("secret"), .enteringCredentials(email: "ada@example.com", password: "secret")),
            (.submitCredentials, .authenticating(email: "ada@example.com", password: "secret")),
            (.authenticationSucceeded(user), .authenticated(user)),
            (.loginComplete, .completed),
        ]
        for (event, expected) in steps {
            #expect(LoginFlow.update(&state, event: event).isNone, "\(event)")
            #expect(state == expected)
        }
        #expect(state.isTerminal)
    }

    @Test("a failed authentication can start over")
    func failureStartsOver() {
        var state = LoginFlow.State.authenticating(email: "a", password: "p")
        #expect(LoginFlow.update(&state, event: .authenticationFailed(message: "wrong password")).isNone)
        #expect(state == .failed(message: "wrong password"))
        #expect(!state.isTerminal)
        #expect(LoginFlow.update(&state, event: .startLogin).isNone)
        #expect(state == .enteringCredentials(email: "", password: ""))
    }

    @Test("only completed is terminal")
    func terminal() {
        let nonTerminal: [LoginFlow.State] = [.start, .enteringCredentials(email: "", password: ""),
                                              .authenticating(email: "", password: ""), .authenticated(user),
                                              .failed(message: "")]
        #expect(nonTerminal.allSatisfy { !$0.isTerminal })
        #expect(LoginFlow.State.completed.isTerminal)
    }

    @Test("invalid pairs are unhandled and change nothing", arguments: [
        (LoginFlow.State.start, LoginFlow.Event.submitCredentials),
        (.start, .loginComplete),
        (.enteringCredentials(email: "a", password: "p"),
         .authenticationSucceeded(User(id: "x", name: "X", email: "x"))),
        (.authenticating(email: "a", password: "p"), .updateEmail("b")),
        (.authenticating(email: "a", password: "p"), .startLogin),
        (.authenticated(User(id: "x", name: "X", email: "x")), .startLogin),
        (.failed(message: "m"), .loginComplete),
    ])
    func unhandledPairs(state start: LoginFlow.State, event: LoginFlow.Event) {
        var state = start
        #expect(LoginFlow.update(&state, event: event).isUnhandled)
        #expect(state == start)
    }

    @Test("states and events survive a JSON round trip")
    func codableRoundTrip() throws {
        let states: [LoginFlow.State] = [.start, .enteringCredentials(email: "e", password: "p"),
                                         .authenticating(email: "e", password: "p"), .authenticated(user),
                                         .failed(message: "m"), .completed]
        let events: [LoginFlow.Event] = [
            .startLogin, .updateEmail("e"), .updatePassword("p"), .submitCredentials,
            .authenticationSucceeded(user), .authenticationFailed(message: "m"), .loginComplete,
        ]
        #expect(try roundTrip(states) == states)
        #expect(try roundTrip(events) == events)
    }

    @Test("through the test store: a failure, a second try, and completion ends the run")
    func runEndsAtCompleted() async throws {
        let store = TestStore(LoginFlow.self)
        await store.send(.startLogin) { $0 = .enteringCredentials(email: "", password: "") }
        await store.send(.updateEmail("ada@example.com")) {
            $0 = .enteringCredentials(email: "ada@example.com", password: "")
        }
        await store.send(.submitCredentials) { $0 = .authenticating(email: "ada@example.com", password: "") }
        await store.send(.authenticationFailed(message: "password required")) {
            $0 = .failed(message: "password required")
        }
        await store.sendUnhandled(.loginComplete)
        await store.send(.startLogin) { $0 = .enteringCredentials(email: "", password: "") }
        await store.send(.updatePassword("secret")) { $0 = .enteringCredentials(email: "", password: "secret") }
        await store.send(.submitCredentials) { $0 = .authenticating(email: "", password: "secret") }
        await store.send(.authenticationSucceeded(user)) { $0 = .authenticated(self.user) }
        await store.send(.loginComplete) { $0 = .completed }

        let termination = try await store.host.termination()
        #expect(termination.finalState == .completed)
        #expect(throws: HostError.self) { try store.host.send(.startLogin) }
        await store.finish()
    }
}
