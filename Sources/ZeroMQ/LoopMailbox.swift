internal import CZeroMQ
import DequeModule
import Glibc
import Synchronization

/// One thing another thread handed to the loop.
enum LoopCommand: Sendable {
    case message(Outbound)
    case run(@Sendable (LoopIO) -> Void)
    /// A Swift concurrency job for ``LoopExecutor``.
    case job(UnownedJob)
}

/// The only state shared between other threads and the loop thread: a queue of commands, a stop
/// flag, and an eventfd that wakes `zmq_poll`.
final class LoopMailbox: Sendable {
    private struct State {
        var commands: Deque<LoopCommand> = []
        var stopRequested = false
        /// The loop has finished: jobs go to the executor's stand-in, not the queue.
        var retired = false
    }

    private let state = Mutex(State())
    /// Non-blocking, close-on-exec eventfd; closed when the last of the loop and its thread let go.
    let wakeFD: Int32
    /// The loop thread once it runs (0 before): what it posts itself needs no wake-up, the loop
    /// looks at the queue before it polls again.
    private let loopThread = Atomic<UInt>(0)

    init(loopName: String) throws(ZMQError) {
        let fd = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
        guard fd >= 0 else {
            throw ZMQError(errno: errno, operation: "create eventfd for I/O loop \(loopName)")
        }
        wakeFD = fd
    }

    deinit { close(wakeFD) }

    /// Queues commands and wakes the loop when the queue was empty; a non-empty queue means a
    /// wake-up is already on its way (the loop resets the eventfd before taking the queue).
    /// Commands posted once a stop was asked are dropped. The loop thread's own posts wake
    /// nothing: it looks at the queue before it polls again.
    func post(_ commands: some Sequence<LoopCommand>) {
        let wake = state.withLock { state -> Bool in
            guard !state.stopRequested else { return false }
            let wasEmpty = state.commands.isEmpty
            state.commands.append(contentsOf: commands)
            return wasEmpty && !state.commands.isEmpty
        }
        if wake, !isLoopThread { signal() }
    }

    /// Queues a job for the loop, even once a stop was asked (the loop runs what it took before
    /// it ends); after the loop finished, hands it to `afterLoop` instead, in order.
    func post(job: UnownedJob, afterLoop: (UnownedJob) -> Void) {
        let wake = state.withLock { state -> Bool in
            guard !state.retired else {
                afterLoop(job)
                return false
            }
            state.commands.append(.job(job))
            return state.commands.count == 1
        }
        if wake, !isLoopThread { signal() }
    }

    /// The loop is done: jobs still queued, and every job posted from now on, go to `afterLoop`,
    /// in order; messages still queued are dropped, as after a stop.
    func retire(handingJobsTo afterLoop: (UnownedJob) -> Void) {
        state.withLock { state in
            state.retired = true
            state.stopRequested = true
            for case .job(let job) in state.commands { afterLoop(job) }
            state.commands.removeAll()
        }
    }

    /// Called by the loop thread as it starts.
    func runningOnThisThread() {
        loopThread.store(pthread_self(), ordering: .releasing)
    }

    /// Called by the loop thread as it ends: a later thread may get the same id.
    func leavingThisThread() {
        loopThread.store(0, ordering: .releasing)
    }

    /// Whether the caller is the loop thread.
    var isLoopThread: Bool { loopThread.load(ordering: .acquiring) == pthread_self() }

    /// Whether commands wait (the loop thread's own posts signal nothing).
    var hasCommands: Bool { state.withLock { !$0.commands.isEmpty } }

    func requestStop() {
        let first = state.withLock { state -> Bool in
            defer { state.stopRequested = true }
            return !state.stopRequested
        }
        if first { signal() }
    }

    /// Takes everything queued, after resetting the eventfd when it fired. Taking without a reset
    /// is harmless: a wake-up left behind only makes the next poll return at once.
    func take(resettingWake: Bool) -> (commands: Deque<LoopCommand>, stopRequested: Bool) {
        if resettingWake {
            var counter: UInt64 = 0
            _ = read(wakeFD, &counter, MemoryLayout<UInt64>.size)
        }
        return state.withLock { state in
            defer { state.commands.removeAll() }
            return (state.commands, state.stopRequested)
        }
    }

    private func signal() {
        var one: UInt64 = 1
        while write(wakeFD, &one, MemoryLayout<UInt64>.size) < 0 && errno == EINTR {}
    }
}
