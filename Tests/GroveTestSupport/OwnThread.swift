import Foundation
package import Testing

/// Runs each test of the suite (or the test) it is applied to on threads of its own, not on
/// Swift's cooperative pool: for tests that block (a socket receive with a timeout, a semaphore,
/// joining a thread). The pool has as many threads as cores, two here, and every other test of
/// the run waits for them. The test stays one task, so its `#expect`s are its own and its time
/// limit holds; synchronous tests run there too (their body runs in the test's task, which
/// this trait gives a task executor preference).
package struct OwnThreadTrait: SuiteTrait, TestTrait, TestScoping {
    package var isRecursive: Bool { true }

    package func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        // A suite's scope holds its tests' scopes: apply it once, to each test.
        guard !test.isSuite else { return try await function() }
        try await withTaskExecutorPreference(OwnThreadExecutor.shared) { try await function() }
    }
}

extension Trait where Self == OwnThreadTrait {
    /// Runs the tests off the cooperative pool, on threads of their own: they block.
    package static var ownThread: Self { Self() }
}

/// A task executor that runs every job on a new thread named ``threadName``: nothing it runs can
/// hold a thread another test needs.
package final class OwnThreadExecutor: TaskExecutor {
    package static let shared = OwnThreadExecutor()
    /// At most 15 characters: Linux's limit for a thread's name. `OwnThreadTests` (ZeroMQTests)
    /// checks that tests with this trait run there.
    package static let threadName = "test-own-thread"

    /// The name of the thread this runs on (Linux).
    package static var currentThreadName: String {
        let name = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? ""
        return name.trimmingCharacters(in: .newlines)
    }

    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        Thread {
            // Named by the thread itself: Foundation's `name` reaches the OS only when the
            // starting thread has registered the new one, which a fast thread can outrun.
            try? Data(Self.threadName.utf8).write(to: URL(fileURLWithPath: "/proc/thread-self/comm"))
            job.runSynchronously(on: executor)
        }.start()
    }
}
