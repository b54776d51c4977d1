import DequeModule
import Glibc
import Synchronization
import ZeroMQ

/// The in-memory twin of a worker's ``IOLoop`` for tests, as `EmbeddedLoop` is the coordinator's:
/// an executor that only queues what is given to it, run by the test on its own thread with
/// ``runUntilIdle()``, and the messages the worker posts kept for the test to take
/// (``takePosted()``). Nothing runs in between: a test that runs the loop until idle has seen
/// everything the worker does in that turn, with no thread, no wall clock and no deadline.
///
/// It is the runtime's and its hosts' serial executor, and the task executor of the tasks the
/// worker starts for its own plumbing (``WorkerLoop/spawn(_:)``), so those run here too. What
/// the machines' effects run on the global pool (a `.task`, a sleep) comes back to it as a job
/// when it is done, and runs at the next ``runUntilIdle()``.
final class DrivenLoop: SerialExecutor, TaskExecutor, Sendable {
    private enum Work {
        case job(UnownedJob)
        case run(@Sendable () -> Void)
    }

    private struct State {
        var queue: Deque<Work> = []
        var posted: [Outbound] = []
        /// Tasks paused until the next run (``pause()``).
        var paused: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())
    /// The thread running ``runUntilIdle()`` now (0: none): code on it is isolated to this
    /// executor.
    private let runner = Atomic<UInt>(0)

    init() {}

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        state.withLock { $0.queue.append(.job(job)) }
    }

    /// Queues `body` to run isolated to this executor, in order with jobs, as ``IOLoop/execute(_:)``
    /// runs a closure on the loop thread.
    func execute(_ body: @escaping @Sendable () -> Void) {
        state.withLock { $0.queue.append(.run(body)) }
    }

    /// Keeps a message the worker posted for the coordinator.
    func post(_ message: Outbound) {
        state.withLock { $0.posted.append(message) }
    }

    /// Keeps several messages the worker posted, in order.
    func post(contentsOf messages: [Outbound]) {
        state.withLock { $0.posted += messages }
    }

    /// Takes what the worker posted so far, in order.
    func takePosted() -> [Outbound] {
        state.withLock { Swift.exchange(&$0.posted, with: []) }
    }

    /// Whether the worker posted something the test has not taken.
    var hasPosted: Bool { state.withLock { !$0.posted.isEmpty } }

    /// Runs queued jobs and closures on the caller's thread, oldest first, until none is left
    /// (what they queue runs too).
    /// - Returns: How many ran.
    @discardableResult
    func runUntilIdle() -> Int {
        let me = pthread_self()
        precondition(runner.load(ordering: .acquiring) != me, "DrivenLoop.runUntilIdle() called from a job it runs")
        runner.store(me, ordering: .releasing)
        defer { runner.store(0, ordering: .releasing) }
        var ran = 0
        // What paused in an earlier run goes on now, behind what was queued meanwhile.
        for waiter in state.withLock({ Swift.exchange(&$0.paused, with: []) }) { waiter.resume() }
        while let work = state.withLock({ $0.queue.popFirst() }) {
            ran += 1
            switch work {
            case .job(let job): job.runSynchronously(isolatedTo: asUnownedSerialExecutor(), taskExecutor: asUnownedTaskExecutor())
            case .run(let body): body()
            }
        }
        return ran
    }

    /// Waits until the test runs the loop again: a pause in which the test moves messages
    /// between the worker and the coordinator, as the real loop reads and sends in one.
    /// The task prefers this loop while it waits: a continuation resumed outside an executor's
    /// job would otherwise go on on the shared pool first, and come back at no set time.
    func pause(isolation: isolated (any Actor)? = #isolation) async {
        await withTaskExecutorPreference(self) {
            await withCheckedContinuation { waiter in state.withLock { $0.paused.append(waiter) } }
        }
    }

    /// Whether anything waits to run, now or after a pause.
    var isIdle: Bool { state.withLock { $0.queue.isEmpty && $0.paused.isEmpty } }

    /// Inside ``runUntilIdle()``, on its thread, code isolated to this executor may run.
    func isIsolatingCurrentContext() -> Bool? {
        runner.load(ordering: .acquiring) == pthread_self()
    }

    func checkIsolated() {
        precondition(isIsolatingCurrentContext() == true, "not running in this DrivenLoop's runUntilIdle()")
    }
}
