import Grove
import GroveRuntime
import Synchronization

// Helpers for the dialect example suites: bounded waits, never sleeps.

/// Runs `body`, giving up after `timeout`. `body` must end when its task is cancelled.
/// - Returns: What `body` returned, or `nil` when the deadline passed first.
func withinDeadline<T: Sendable>(
    _ timeout: Duration = .seconds(10), _ body: @escaping @Sendable () async -> T
) async -> T? {
    await withTaskGroup(of: T?.self) { group in
        group.addTask { await body() }
        group.addTask {
            try? await Task.sleep(for: timeout)
            return nil
        }
        let first = await group.next() ?? nil
        group.cancelAll()
        return first
    }
}

/// The first state of `host`, from its current one on, that satisfies `condition`.
/// - Returns: `nil` when no such state was committed within `timeout`.
func awaitState<M: Machine>(
    of host: MachineHost<M>,
    within timeout: Duration = .seconds(10),
    where condition: @escaping @Sendable (M.State) -> Bool
) async -> M.State? {
    await host.firstState(within: timeout, where: condition)
}

/// A one-shot signal that work fires and a test awaits with a deadline.
final class ExampleSignal: Sendable {
    private struct Inner {
        var fired = false
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
        var nextWaiter = 0
    }

    private let inner = Mutex(Inner())

    /// Fires the signal; later calls do nothing more.
    func fire() {
        let waiters = inner.withLock { inner in
            inner.fired = true
            return Swift.exchange(&inner.waiters, with: [:])
        }
        for waiter in waiters.values { waiter.resume() }
    }

    var isFired: Bool { inner.withLock { $0.fired } }

    /// Waits until the signal fires.
    /// - Returns: `false` when `timeout` passed first.
    func wait(within timeout: Duration = .seconds(10)) async -> Bool {
        _ = await withinDeadline(timeout) { await self.firedOrCancelled() }
        return isFired
    }

    private func firedOrCancelled() async {
        let id = inner.withLock { inner in
            inner.nextWaiter += 1
            return inner.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let resumeNow = inner.withLock { inner in
                    if inner.fired || Task.isCancelled { return true }
                    inner.waiters[id] = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            inner.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
        }
    }
}

/// Values appended from any task, in order.
final class ExampleLog<Value: Sendable>: Sendable {
    private let storage = Mutex<[Value]>([])

    func append(_ value: Value) { storage.withLock { $0.append(value) } }

    var values: [Value] { storage.withLock { $0 } }
}

/// Host options that record every event the host processed or found unhandled into `log`.
func recordingOptions<M: Machine>(_ log: ExampleLog<M.Event>, for machine: M.Type = M.self) -> HostOptions<M> {
    HostOptions(trace: { trace in
        switch trace {
        case .processed(let event, _, _), .unhandled(let event, _, _): log.append(event)
        case .output, .workEnded, .workFailed, .resultDiscarded: break
        }
    })
}
