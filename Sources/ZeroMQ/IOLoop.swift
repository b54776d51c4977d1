import Glibc
import Synchronization

/// One thread that owns a process's sockets: it polls them, hands what arrives to a delegate in
/// batches, sends what the delegate asks (queueing in outboxes when a peer is slow), and takes
/// messages from other threads through `post(_:)`.
///
/// ```swift
/// let loop = try IOLoop(name: "worker-io")
/// let dealer = loop.add(socket)   // before start; the loop now owns the socket
/// loop.start(ForwardingDelegate(onBatch: { batch in handle(batch) }))
/// loop.post(Outbound(socket: dealer, frames: [payload]))
/// loop.stop()
/// ```
package final class IOLoop: @unchecked Sendable {
    private enum Phase {
        case idle
        case running(pthread_t)
        case stopped
    }

    /// The loop's name, also its thread's name (first 15 bytes).
    package let name: String
    let mailbox: LoopMailbox  // internal: tests look at what waits in it
    /// Touched by `add` and `start` before the thread exists, then only by the thread.
    private let core: LoopCore
    private let phase = Mutex(Phase.idle)
    /// Serialises joiners so that every `stop()` returns only after the thread has ended.
    private let joining = Mutex(())

    /// Creates a loop and its wake-up eventfd. Nothing runs until `start(_:)`.
    /// - Parameters:
    ///   - name: Names the thread, e.g. `"coordinator-io"`.
    ///   - tickInterval: The delegate's `tick` is called at least this often.
    ///   - maxBatch: At most this many messages are received per iteration, so ticks and posted
    ///     messages keep their turn under load.
    /// - Throws: `ZMQError` when the eventfd cannot be created.
    package init(
        name: String, tickInterval: Duration = .milliseconds(50), maxBatch: Int = 1024
    ) throws(ZMQError) {
        self.name = name
        mailbox = try LoopMailbox(loopName: name)
        core = LoopCore(name: name, tickInterval: tickInterval, maxBatch: max(1, maxBatch), mailbox: mailbox)
    }

    deinit {
        let detach: pthread_t? = phase.withLock { phase in
            guard case .running(let thread) = phase, pthread_equal(thread, pthread_self()) != 0 else { return nil }
            phase = .stopped
            return thread
        }
        if let detach {
            // Released by its own delegate: the thread ends by itself, nobody is left to join it.
            mailbox.requestStop()
            pthread_detach(detach)
        } else {
            stop()
        }
    }

    /// Hands a socket to the loop. Call before `start(_:)`; afterwards only the loop thread uses it.
    /// - Parameter socket: A configured (bound or connected) socket.
    /// - Returns: The id to send with and to recognise inbound messages by.
    package func add(_ socket: Socket) -> SocketID {
        phase.withLock { phase in
            guard case .idle = phase else { preconditionFailure("IOLoop.add(_:) after start() on \(name)") }
            return core.add(socket)
        }
    }

    /// Starts the loop thread. The loop keeps `delegate` until it stops. Calling it again, or after
    /// `stop()`, does nothing.
    /// - Parameter delegate: Receives callbacks on the loop thread.
    package func start(_ delegate: some IOLoopDelegate) {
        phase.withLock { phase in
            guard case .idle = phase else { return }
            core.delegate = delegate
            var thread = pthread_t()
            let context = Unmanaged.passRetained(core).toOpaque()
            let rc = pthread_create(&thread, nil, { context in
                Unmanaged<LoopCore>.fromOpaque(context!).takeRetainedValue().run()
                return nil
            }, context)
            precondition(rc == 0, "cannot start the I/O thread of \(name): pthread_create returned \(rc)")
            phase = .running(thread)
        }
    }

    /// Runs Swift concurrency jobs on the loop thread; see ``LoopExecutor``.
    package var executor: LoopExecutor { core.executor }

    /// Hands a message to the loop; the delegate's `posted` gets it, in order. Thread-safe.
    /// Messages posted after `stop()` are dropped.
    /// - Parameter message: The message.
    package func post(_ message: Outbound) {
        mailbox.post(CollectionOfOne(.message(message)))
    }

    /// Hands several messages to the loop, in order, with one wake-up. Thread-safe.
    /// - Parameter messages: The messages.
    package func post(contentsOf messages: [Outbound]) {
        mailbox.post(messages.lazy.map { .message($0) })
    }

    /// Runs `body` on the loop thread, in order with posted messages. Thread-safe.
    /// Dropped after `stop()`.
    /// - Parameter body: Work that needs the loop's sockets or outboxes.
    package func execute(_ body: @escaping @Sendable (LoopIO) -> Void) {
        mailbox.post(CollectionOfOne(.run(body)))
    }

    /// Ends the loop: messages already posted are delivered, the delegate's `stopping` is called,
    /// outboxes get a last try, the sockets close (`LINGER` applies) and the thread is joined.
    ///
    /// Thread-safe and idempotent: every caller returns once the thread has ended. Called on the
    /// loop thread (a delegate callback, or code of an actor on ``executor``) it only asks the
    /// loop to end after the current iteration: such code must not then wait for the loop to end
    /// (say, by terminating its context), which would deadlock.
    package func stop() {
        mailbox.requestStop()
        let onLoopThread = phase.withLock { phase in
            guard case .running(let thread) = phase else { return false }
            return pthread_equal(thread, pthread_self()) != 0
        }
        guard !onLoopThread else { return }
        joining.withLock { _ in
            let previous = phase.withLock { phase in
                defer { phase = .stopped }
                return phase
            }
            switch previous {
            case .idle:
                // Never started: the sockets are still ours to close, and jobs of its executor
                // must run elsewhere.
                for socket in core.sockets { socket.close() }
                mailbox.retire(handingJobsTo: core.executor.runAfterLoop)
            case .running(let thread):
                pthread_join(thread, nil)
            case .stopped:
                break
            }
        }
    }
}
