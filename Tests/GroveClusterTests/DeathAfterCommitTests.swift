@testable import GroveWorker
import Testing

/// The worker's test hook is off unless its variable names a file (`RetryTests` turns it on).
@Suite(.timeLimit(.minutes(2))) struct DeathAfterCommitTests {
    @Test func itIsOffUnlessTheVariableNamesAFile() {
        #expect(DeathAfterCommit(environment: [:]).trigger == nil)
        #expect(DeathAfterCommit(environment: [DeathAfterCommit.variable: ""]).trigger == nil)
        #expect(DeathAfterCommit(environment: [DeathAfterCommit.variable: "/tmp/die"]).trigger == "/tmp/die")
    }

    @Test func withNoTriggerFileACommitGoesOn() {
        // The variable set, its file absent: the process lives (this test would not finish otherwise).
        DeathAfterCommit(environment: [DeathAfterCommit.variable: "/nonexistent/grove-death-trigger"]).committed()
        DeathAfterCommit(environment: [:]).committed()
    }
}
