import Dispatch

/// Runs Swift concurrency jobs on an ``IOLoop``'s thread, in turn with what the loop receives
/// and what is posted to it: a serial executor for actors that live with the loop.
///
/// An actor whose `unownedExecutor` is this one runs its code on the loop thread, and calls
/// between such actors switch without a thread hand-off; what they post to the loop is sent in the
/// same turn, with no wake-up. Their code must not block: it stalls the loop's sockets. Once the
/// loop has ended, its jobs run one at a time on a queue of their own, so those actors keep
/// working (and stay serial).
package final class LoopExecutor: SerialExecutor {
    private let mailbox: LoopMailbox
    /// Where jobs run once the loop has ended.
    private let afterLoop = DispatchQueue(label: "grove.loop-executor.after-loop")

    init(mailbox: LoopMailbox) {
        self.mailbox = mailbox
    }

    package func enqueue(_ job: consuming ExecutorJob) {
        mailbox.post(job: UnownedJob(job), afterLoop: runAfterLoop)
    }

    /// Runs a job on the queue that stands in for the loop once it has ended.
    func runAfterLoop(_ job: UnownedJob) {
        afterLoop.async { job.runSynchronously(on: self.asUnownedSerialExecutor()) }
    }

    /// Runs a job on the loop thread, isolated to this executor.
    func run(_ job: UnownedJob) {
        job.runSynchronously(on: asUnownedSerialExecutor())
    }

    /// On the loop thread, in a job or in a delegate callback, code isolated to this executor
    /// may run: `assumeIsolated` from a delegate callback holds.
    package func isIsolatingCurrentContext() -> Bool? {
        mailbox.isLoopThread
    }

    package func checkIsolated() {
        precondition(mailbox.isLoopThread, "not on the I/O loop thread this executor runs on")
    }
}
