import ZeroMQ

/// What a worker's runtime and hosts run on: the process's ``IOLoop`` (its thread is their
/// executor, and what they post leaves on its socket), or a ``DrivenLoop`` a test runs by hand.
/// An enum of two class references, as `LoopIO` is for the coordinator: posting a message pays
/// one switch, never an existential call.
enum WorkerLoop: Sendable {
    case io(IOLoop)
    case driven(DrivenLoop)

    /// The executor the runtime and every host run on.
    var executor: any SerialExecutor {
        switch self {
        case .io(let loop): loop.executor
        case .driven(let loop): loop
        }
    }

    /// Hands a message for the coordinator to the loop: sent on the socket, or kept for the test.
    @inline(__always)
    func post(_ message: Outbound) {
        switch self {
        case .io(let loop): loop.post(message)
        case .driven(let loop): loop.post(message)
        }
    }

    /// Hands several messages to the loop at once, in order (one wake-up: the delegate gets them
    /// together).
    func post(contentsOf messages: [Outbound]) {
        switch self {
        case .io(let loop): loop.post(contentsOf: messages)
        case .driven(let loop): loop.post(contentsOf: messages)
        }
    }

    /// A short pause in which the loop reads and sends (between recovery chunks, before parked
    /// messages): a millisecond's sleep beside an I/O loop; on a driven loop, until the test
    /// runs it again (``DrivenLoop/runUntilIdle()`` resumes what paused in an earlier run only).
    /// Runs on the caller's actor (the runtime), not the shared pool: it leaves the loop only
    /// to sleep.
    func pause(isolation: isolated (any Actor)? = #isolation) async {
        switch self {
        case .io: try? await Task.sleep(for: .milliseconds(1))
        case .driven(let loop): await loop.pause()
        }
    }

    /// Starts the worker's own plumbing in a task (a turn of its own, a publication): on the
    /// global pool beside an I/O loop, as before; on a driven loop, on the loop itself (its task
    /// executor), so a test that runs the loop until idle runs the task too, and none escapes.
    /// Not for a machine's own async work (its `.task` effects), which may wait on the world.
    @discardableResult
    func spawn(_ body: @escaping @Sendable () async -> Void) -> Task<Void, Never> {
        switch self {
        case .io: Task(operation: body)
        case .driven(let loop): Task(executorPreference: loop, operation: body)
        }
    }
}
