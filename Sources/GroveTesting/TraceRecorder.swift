import Grove
import GroveRuntime
import Synchronization

/// Collects what a host did, in order, and lets the test store wait for more.
final class TraceRecorder<M: Machine>: Sendable {
    private struct Inner {
        var traces: [HostTrace<M>] = []
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
        var nextWaiter = 0
    }

    private let inner = Mutex(Inner())

    func record(_ trace: HostTrace<M>) {
        let waiters = inner.withLock { state in
            state.traces.append(trace)
            return Swift.exchange(&state.waiters, with: [:])
        }
        for waiter in waiters.values { waiter.resume() }
    }

    /// Removes and returns everything recorded so far.
    func take() -> [HostTrace<M>] {
        inner.withLock { Swift.exchange(&$0.traces, with: []) }
    }

    /// Waits until something new is recorded, or `timeout` passes.
    func waitForActivity(timeout: Duration) async {
        let id = inner.withLock { state in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        let timer = Task {
            try? await Task.sleep(for: timeout)
            self.resume(id)
        }
        await withCheckedContinuation { continuation in
            let resumeNow = inner.withLock { state in
                guard state.traces.isEmpty else { return true }
                state.waiters[id] = continuation
                return false
            }
            if resumeNow { continuation.resume() }
        }
        timer.cancel()
    }

    private func resume(_ id: Int) {
        inner.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
    }
}
