import Grove
import GroveCluster
import GroveRuntime
import GroveWire

extension WorkerRuntime {
    /// A local io call's handler task, and how to answer the machine waiting for it with a
    /// failure instead of its result.
    struct LocalWaiter {
        let task: Task<Void, Never>
        let answer: @Sendable (IOFailure) -> Void
    }

    /// Runs one of this worker's machines' io requests on its own handlers, under the timeout
    /// the core keeps (``WorkerCore/startLocalCall(address:request:now:)``): the handler runs in
    /// a task of its own, so a tick that finds the call past its deadline can cancel it and answer
    /// the machine `timeout` without waiting for a handler that ignores cancellation. On the loop
    /// (the machine's task hops here through ``CoreInlet``).
    /// - Parameters:
    ///   - failing: The machine's answer for a failure (a timeout, or its own cancellation).
    ///   - body: The handler's work.
    func runLocal<T: Sendable>(address: String, request: String, failing: @escaping @Sendable (IOFailure) -> T,
                               body: @escaping @Sendable () async -> T) async -> T {
        let call = core.startLocalCall(address: address, request: request, now: .now)
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (waiter: CheckedContinuation<T, Never>) in
                let task = Task.detached { [self] in
                    let result = await body()
                    await self.endLocal(call) { waiter.resume(returning: result) }
                }
                localWaiters[call] = LocalWaiter(task: task) { waiter.resume(returning: failing($0)) }
            }
        } onCancel: {
            // On the thread that cancelled: onto the loop, in order with the ticks.
            link.loop.spawn { await self.cancelLocal(call) }
        }
    }

    /// The handler of local call `call` answered: the machine gets its result, unless the call
    /// timed out or was cancelled first (it has its answer already).
    private func endLocal(_ call: UInt64, resume: @Sendable () -> Void) {
        guard localWaiters.removeValue(forKey: call) != nil else { return }
        _ = core.endLocalCall(call)
        resume()
    }

    /// The machine's task waiting for local call `call` was cancelled (cancel by id, replace,
    /// terminal state, stop): its handler's task is cancelled too.
    private func cancelLocal(_ call: UInt64) {
        guard let waiter = localWaiters.removeValue(forKey: call) else { return }
        _ = core.endLocalCall(call)
        waiter.task.cancel()
        waiter.answer(IOFailure(IOFailure.Code(rawValue: "cancelled"), "the effect was cancelled"))
    }

    /// Carries out ``WorkerAction/timeOutLocalCalls(_:)``: each handler's task cancelled, each
    /// machine answered with its `timeout`.
    func timeOut(_ timeouts: [WorkerCore.LocalTimeout]) {
        for timeout in timeouts {
            guard let waiter = localWaiters.removeValue(forKey: timeout.call) else { continue }
            waiter.task.cancel()
            waiter.answer(timeout.failure)
            log.notice("io request timed out", metadata: ["machine": "\(timeout.address)", "call": "\(timeout.call)"])
        }
    }
}
