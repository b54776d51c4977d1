import Foundation
import GroveTestSupport
import Testing

/// The `.ownThread` trait really moves a test off the cooperative pool, synchronous or not: the
/// socket suites rely on it.
@Suite(.timeLimit(.minutes(2)), .ownThread) struct OwnThreadTests {
    @Test func aSynchronousTestRunsOnAThreadOfItsOwn() {
        #expect(OwnThreadExecutor.currentThreadName == OwnThreadExecutor.threadName)
    }

    @Test func anAsynchronousTestRunsThereAfterItsAwaitsToo() async throws {
        #expect(OwnThreadExecutor.currentThreadName == OwnThreadExecutor.threadName)
        try await Task.sleep(for: .milliseconds(1))
        #expect(OwnThreadExecutor.currentThreadName == OwnThreadExecutor.threadName)
    }
}
