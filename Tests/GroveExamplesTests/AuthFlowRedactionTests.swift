import Grove
import GroveExamples
import Testing

@Suite("AuthFlow redaction", .timeLimit(.minutes(2)))
struct AuthFlowRedactionTests {
    typealias Step = AuthFlow.Step

    @Test(arguments: [
        (Step.enteringCredentials(email: "ada@example.com", password: "hunter2"),
         Step.enteringCredentials(email: "ada@example.com", password: Redaction.placeholder)),
        (.requiresTwoFactor(token: "t-123", email: "ada@example.com"),
         .requiresTwoFactor(token: Redaction.placeholder, email: "ada@example.com")),
        (.enteringTwoFactor(token: "t-123", email: "a@b", code: "424242"),
         .enteringTwoFactor(token: Redaction.placeholder, email: "a@b", code: Redaction.placeholder)),
        (.verifyingTwoFactor(token: "t-123", email: "a@b", code: "424242"),
         .verifyingTwoFactor(token: Redaction.placeholder, email: "a@b", code: Redaction.placeholder)),
        (.enteringCredentials(email: "a@b", password: ""), .enteringCredentials(email: "a@b", password: "")),
        (.authenticating(email: "a@b"), .authenticating(email: "a@b")),
        (.locked, .locked),
    ])
    func secretsAreReplacedAndTheRestKept(step: Step, shown: Step) {
        let state = AuthFlow.State(step: step, failedAttempts: 2, maxAttempts: 5)
        #expect(state.redacted == AuthFlow.State(step: shown, failedAttempts: 2, maxAttempts: 5))
    }
}
