import Grove
import GroveCheck
import GroveTesting
import Testing

// Seed 001's guarantees (completeness, determinism, reachability, termination), checked on the
// seeds' own machines by walking their reachable states.

extension LoginFlow: Checkable {
    typealias Checked = OakTransducer<LoginFlow>

    static var sampleEvents: [Event] {
        [.startLogin, .updateEmail("ada@example.com"), .updatePassword("pw"), .submitCredentials,
         .authenticationSucceeded(User(id: "u-ada", name: "Ada")), .authenticationFailed(TestError("wrong password")),
         .loginComplete]
    }

    static var declaredStates: [State] {
        [.start, .enteringCredentials(email: "", password: ""), .authenticating(email: "", password: ""),
         .authenticated(User(id: "u-ada", name: "Ada")), .failed(TestError("")), .completed]
    }
}

extension UserForm: Checkable {
    typealias Checked = Oak<UserForm>

    static var sampleEvents: [Event] {
        [.updateName("Ada"), .updateEmail("ada@example.com"), .updatePhone("0123456789"), .validate, .submit,
         .validationComplete([]), .validationComplete([.invalidEmail]), .submissionComplete(.success(confirmation: "F-1")),
         .cancel]
    }

    static var declaredStates: [State] {
        [.editing(FormData(), errors: []), .validating(FormData()), .submitting(FormData()),
         .submitted(result: .success(confirmation: "")), .cancelled]
    }
}

@Suite("Seed 001's guarantees on the seeds' machines", .timeLimit(.minutes(2)))
struct SeedGuaranteesTests {
    @Test("seed 001's LoginFlow: complete only by Oak's definition (its default: break falls through), deterministic, every state reachable, completed ends it")
    func loginFlow() {
        let graph = expectCompleteStateGraph(LoginFlow.self, allowFallThrough: true)
        #expect(!graph.fallsThrough.isEmpty)
        #expect(graph.terminal == ["completed"])
        #expect(graph.reachable.count == 6)
    }

    @Test("seed 000's UserForm: validating is declared but unreachable, as its update never enters it")
    func userForm() {
        let graph = StateGraph.explore(UserForm.self)
        #expect(graph.unreachable == ["validating"])
        #expect(graph.nondeterministic.isEmpty)
        #expect(graph.unhandled.isEmpty, "an EffectTransducer's default: return nil handles everything")
        #expect(graph.fallsThrough.contains { $0.state == "editing" && $0.event == "validate" })
        #expect(Set(graph.terminal) == ["submitted", "cancelled"])
    }
}
