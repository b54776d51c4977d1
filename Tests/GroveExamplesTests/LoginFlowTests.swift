import Foundation
import Grove
import GroveExamples
import GroveRuntime
import GroveTesting
import Testing

@Suite("LoginFlow", .timeLimit(.minutes(2)))
struct LoginFlowTests {
    private let user = User(id: "u-ada", name: "Ada Lovelace", email: "ada@example.com")

    private struct Timeout: Error, CustomStringConvertible {
        var description: String { "the service did not answer" }
    }

    @Test("the seed's walk from start to completed")
    func happyPath() {
        var state = LoginFlow.initialState
        #expect(state == .start)
        let steps: [(LoginFlow.Event, LoginFlow.State)] = [
            (.startLogin, .enteringCredentials(email: "", password: "")),
            (.updateEmail("ada@example.com"), .enteringCredentials(email: "ada@example.com", password: "")),
            (.updatePassword("secret"), .enteringCredentials(email: "ada@example.com", password: "secret")),
            (.submitCredentials, .authenticating(email: "ada@example.com", password: "secret")),
            (.authenticationSucceeded(user), .authenticated(user)),
            (.loginComplete, .completed),
        ]
        for (event, expected) in steps {
            LoginFlow.update(&state, event: event)
            #expect(state == expected, "\(event)")
        }
        #expect(state.isTerminal)
    }

    @Test("a failed authentication keeps the error and can start over")
    func failureStartsOver() {
        var state = LoginFlow.State.authenticating(email: "a", password: "p")
        LoginFlow.update(&state, event: .authenticationFailed(Timeout()))
        guard case .failed(let error) = state else {
            Issue.record("expected failed, got \(state)")
            return
        }
        #expect(error is Timeout)
        #expect(state == .failed(LoginFlow.Failure("the service did not answer")), "errors compare by description")
        #expect(!state.isTerminal)
        LoginFlow.update(&state, event: .startLogin)
        #expect(state == .enteringCredentials(email: "", password: ""))
    }

    @Test("only completed is terminal")
    func terminal() {
        let nonTerminal: [LoginFlow.State] = [.start, .enteringCredentials(email: "", password: ""),
                                              .authenticating(email: "", password: ""), .authenticated(user),
                                              .failed(LoginFlow.Failure(""))]
        #expect(nonTerminal.allSatisfy { !$0.isTerminal })
        #expect(LoginFlow.State.completed.isTerminal)
    }

    @Test("invalid pairs are ignored, as the seed says: the state stays and the host sees no effect", arguments: [
        (LoginFlow.State.start, LoginFlow.Event.submitCredentials),
        (.start, .loginComplete),
        (.enteringCredentials(email: "a", password: "p"),
         .authenticationSucceeded(User(id: "x", name: "X", email: "x"))),
        (.authenticating(email: "a", password: "p"), .updateEmail("b")),
        (.authenticating(email: "a", password: "p"), .startLogin),
        (.authenticated(User(id: "x", name: "X", email: "x")), .startLogin),
        (.failed(LoginFlow.Failure("m")), .loginComplete),
    ])
    func ignoredPairs(state start: LoginFlow.State, event: LoginFlow.Event) {
        var state = start
        #expect(OakTransducer<LoginFlow>.update(&state, event: event).isNone)
        #expect(state == start)
    }

    @Test("states and events survive a JSON round trip; errors arrive as their description")
    func codableRoundTrip() throws {
        let states: [LoginFlow.State] = [.start, .enteringCredentials(email: "e", password: "p"),
                                         .authenticating(email: "e", password: "p"), .authenticated(user),
                                         .failed(LoginFlow.Failure("m")), .completed]
        let events: [LoginFlow.Event] = [
            .startLogin, .updateEmail("e"), .updatePassword("p"), .submitCredentials,
            .authenticationSucceeded(user), .authenticationFailed(LoginFlow.Failure("m")), .loginComplete,
        ]
        #expect(try roundTrip(states) == states)
        #expect(try roundTrip(events) == events)

        let sent = try JSONDecoder().decode(LoginFlow.Event.self,
                                            from: Data(#"{"authenticationFailed":{"_0":{"message":"wrong password"}}}"#.utf8))
        #expect(sent == .authenticationFailed(LoginFlow.Failure("wrong password")))
        let encoded = try JSONEncoder().encode(LoginFlow.State.failed(Timeout()))
        #expect(String(decoding: encoded, as: UTF8.self) == #"{"failed":{"_0":{"message":"the service did not answer"}}}"#)
    }

    @Test("through the test store as OakTransducer: a failure, an ignored event, a second try, completion ends the run")
    func runEndsAtCompleted() async throws {
        let store = TestStore(OakTransducer<LoginFlow>.self)
        await store.send(.startLogin) { $0 = .enteringCredentials(email: "", password: "") }
        await store.send(.updateEmail("ada@example.com")) {
            $0 = .enteringCredentials(email: "ada@example.com", password: "")
        }
        await store.send(.submitCredentials) { $0 = .authenticating(email: "ada@example.com", password: "") }
        await store.send(.authenticationFailed(LoginFlow.Failure("password required"))) {
            $0 = .failed(LoginFlow.Failure("password required"))
        }
        await store.send(.loginComplete)   // ignored: the state stays
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
