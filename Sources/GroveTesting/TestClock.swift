public import Grove
public import GroveRuntime
import Synchronization

/// A clock that moves only when told to. Timers fire during ``advance(by:settle:)``, in deadline
/// order, so tests of timeouts and polling never sleep.
///
/// ```swift
/// let clock = TestClock()
/// let host = MachineHost(Poller.self, clock: clock)
/// await clock.advance(by: .seconds(3)) { await host.flush() }
/// ```
public final class TestClock: HostClock {
    private struct Pending {
        let deadline: Timestamp
        let order: Int
        let action: @Sendable () -> Void
    }

    private struct Inner {
        var now: Timestamp
        var pending: [Int: Pending] = [:]
        var nextID = 0
    }

    private let inner: Mutex<Inner>

    /// - Parameter now: The starting time; defaults to 2023-11-14T22:13:20Z.
    public init(now: Timestamp = Timestamp(sinceEpoch: .seconds(1_700_000_000))) {
        inner = Mutex(Inner(now: now))
    }

    public func now() -> Timestamp { inner.withLock { $0.now } }

    public func schedule(at deadline: Timestamp, _ action: @escaping @Sendable () -> Void) -> any ScheduledTimer {
        let id = inner.withLock { state in
            let id = state.nextID
            state.nextID += 1
            state.pending[id] = Pending(deadline: deadline, order: id, action: action)
            return id
        }
        return Timer(clock: self, id: id)
    }

    /// How many timers are waiting to fire.
    public var pendingTimerCount: Int { inner.withLock { $0.pending.count } }

    /// Moves time forward by `duration`, firing every timer that falls due, earliest first. After
    /// each firing, `settle` runs (typically `host.flush()`), so timers scheduled by the fired
    /// event's transition fire too when they fall inside the window.
    public func advance(by duration: Duration, settle: () async -> Void = {}) async {
        let target = now() + duration
        await advance(to: target, settle: settle)
    }

    /// Moves time forward to `target`; see ``advance(by:settle:)``.
    public func advance(to target: Timestamp, settle: () async -> Void = {}) async {
        while let due = takeNextDue(upTo: target) {
            due()
            await settle()
        }
        inner.withLock { state in
            if state.now < target { state.now = target }
        }
        await settle()
    }

    private func takeNextDue(upTo target: Timestamp) -> (@Sendable () -> Void)? {
        inner.withLock { state in
            let next = state.pending.values
                .filter { $0.deadline <= target }
                .min { ($0.deadline, $0.order) < ($1.deadline, $1.order) }
            guard let next else { return nil }
            state.pending[next.order] = nil
            if state.now < next.deadline { state.now = next.deadline }
            return next.action
        }
    }

    fileprivate func cancel(_ id: Int) {
        _ = inner.withLock { $0.pending.removeValue(forKey: id) }
    }

    private struct Timer: ScheduledTimer {
        let clock: TestClock
        let id: Int
        func cancel() { clock.cancel(id) }
    }
}
