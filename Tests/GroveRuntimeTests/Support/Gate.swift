import Synchronization

/// Named latches a test opens by hand, so effects finish exactly when the test says.
/// Waiting on a gate ignores task cancellation on purpose: it models work that swallows it.
final class Gate: Sendable {
    private struct Latch {
        var isOpen = false
        var waiters: [CheckedContinuation<Void, Never>] = []
        var timedWaiters: [Int: CheckedContinuation<Bool, Never>] = [:]
    }

    private let nextWaiter = Mutex(0)

    private let latches = Mutex<[String: Latch]>([:])

    func wait(_ name: String) async {
        await withCheckedContinuation { continuation in
            let resumeNow = latches.withLock { latches in
                if latches[name, default: Latch()].isOpen { return true }
                latches[name, default: Latch()].waiters.append(continuation)
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }

    /// Waits until the gate opens or `timeout` passes; `true` when it opened.
    func wait(_ name: String, within timeout: Duration) async -> Bool {
        let id = nextWaiter.withLock { value in
            defer { value += 1 }
            return value
        }
        let timer = Task {
            try? await Task.sleep(for: timeout)
            latches.withLock { $0[name]?.timedWaiters.removeValue(forKey: id) }?.resume(returning: false)
        }
        defer { timer.cancel() }
        return await withCheckedContinuation { continuation in
            let resumeNow = latches.withLock { latches in
                if latches[name, default: Latch()].isOpen { return true }
                latches[name, default: Latch()].timedWaiters[id] = continuation
                return false
            }
            if resumeNow { continuation.resume(returning: true) }
        }
    }

    func open(_ name: String) {
        let (waiters, timed) = latches.withLock { latches in
            latches[name, default: Latch()].isOpen = true
            return (Swift.exchange(&latches[name, default: Latch()].waiters, with: []),
                    Swift.exchange(&latches[name, default: Latch()].timedWaiters, with: [:]))
        }
        for waiter in waiters { waiter.resume() }
        for waiter in timed.values { waiter.resume(returning: true) }
    }

    func isOpen(_ name: String) -> Bool { latches.withLock { $0[name]?.isOpen ?? false } }
}

extension Gate {
    /// A value shared between a test and the work it observes.
    final class Box<Value: Sendable>: Sendable {
        private let storage: Mutex<Value>
        init(_ value: Value) { storage = Mutex(value) }
        var value: Value { storage.withLock { $0 } }
        func mutate(_ change: (inout Value) -> Void) { storage.withLock { change(&$0) } }
    }
}
