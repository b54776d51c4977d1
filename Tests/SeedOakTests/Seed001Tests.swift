import Grove
import GroveRuntime
import GroveTesting
import Testing

/// Seed 001's examples, run as the document describes them.
@Suite("Seed 001: Understanding Finite State Machines", .timeLimit(.minutes(2)))
struct Seed001Tests {
    private let ada = User(id: "u-ada", name: "Ada")

    @Test("Predictable Behavior: the seed's three lines, then its claim")
    func predictableBehavior() {
        var state = LoginFlow.State.start
        LoginFlow.update(&state, event: .startLogin)
        // state is guaranteed to be .enteringCredentials("", "")
        guard case .enteringCredentials("", "") = state else {
            Issue.record("expected enteringCredentials(\"\", \"\"), got \(state)")
            return
        }
    }

    @Test("Testing FSM Logic: the seed's testLoginFlow() passes")
    func seedTest() {
        testLoginFlow()
    }

    @Test("Oak's FSM Implementation: the login walk on a host, as OakTransducer, to the terminal completed")
    func loginOnHost() async throws {
        let host = MachineHost(OakTransducer<LoginFlow>.self)
        for event: LoginFlow.Event in [.startLogin, .updateEmail("ada@example.com"), .updatePassword("pw"),
                                       .submitCredentials, .authenticationSucceeded(ada), .loginComplete] {
            try host.send(event)
        }
        let termination = try await host.run()
        guard case .completed = termination.finalState else { Issue.record("expected completed"); return }
        #expect(termination.finalState.isTerminal)
    }

    @Test("Oak's FSM Implementation: in the test store; invalid transitions are ignored, failed can start over")
    func loginInTestStore() async throws {
        let store = TestStore(OakTransducer<LoginFlow>.self)
        await store.send(.submitCredentials)   // ignored in start
        await store.send(.startLogin) { $0 = .enteringCredentials(email: "", password: "") }
        await store.send(.updatePassword("pw")) { $0 = .enteringCredentials(email: "", password: "pw") }
        await store.send(.submitCredentials) { $0 = .authenticating(email: "", password: "pw") }
        await store.send(.updateEmail("late"))   // ignored while authenticating
        await store.send(.authenticationFailed(TestError("email required"))) { $0 = .failed(TestError("email required")) }
        await store.send(.loginComplete)   // ignored in failed
        await store.send(.startLogin) { $0 = .enteringCredentials(email: "", password: "") }
        await store.send(.updateEmail("ada@example.com")) { $0 = .enteringCredentials(email: "ada@example.com", password: "") }
        await store.send(.submitCredentials) { $0 = .authenticating(email: "ada@example.com", password: "") }
        await store.send(.authenticationSucceeded(ada)) { $0 = .authenticated(self.ada) }
        await store.send(.loginComplete) { $0 = .completed }
        #expect(await store.host.hasEnded)
        await store.finish()
    }

    @Test("Model Terminal States Explicitly: completed, cancelled and failed are terminal")
    func processState() {
        typealias State = ProcessExample.ProcessState
        let terminal: [State] = [.completed(result: .init(summary: "done")), .cancelled, .failed(TestError("x"))]
        let running: [State] = [.initializing, .processing(progress: 0.5)]
        #expect(terminal.allSatisfy { $0.isTerminal })
        #expect(running.allSatisfy { !$0.isTerminal })
    }

    @Test("the declarations of the state-design sections compile and hold what they say")
    func stateDesign() {
        let controller = ViewController()
        controller.loadData()
        #expect(!controller.isLoading && !controller.hasError && controller.data == nil && controller.errorMessage == nil)

        let session = Session(id: "s-1")
        let good: [GoodConnectionExample.ConnectionState] = [.disconnected, .connecting, .connected(session),
                                                            .reconnecting(lastSession: session)]
        #expect(good.count == 4, "four mutually exclusive states")
        // The avoided struct admits the combination the good enum cannot express.
        let contradictory = AvoidedConnectionExample.ConnectionState(isConnected: true, isConnecting: true,
                                                                    session: nil, isReconnecting: true)
        #expect(contradictory.isConnected && contradictory.isConnecting && contradictory.session == nil)

        let form: [FormState] = [.editing(fields: ["name": ""], errors: [.required(field: "name")]),
                                 .validating(fields: ["name": "Ada"]),
                                 .valid(submissionData: SubmissionData(fields: ["name": "Ada"])),
                                 .submitting(submissionData: SubmissionData(fields: ["name": "Ada"])),
                                 .submitted(result: .success(confirmation: "F-1"))]
        #expect(form.count == 5)
    }
}
