public import Grove
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The source of time for a host's timers. Inject `TestClock` (GroveTesting) in tests so they
/// never sleep; production uses ``WallClock``.
public protocol HostClock: Sendable {
    /// The current time.
    func now() -> Timestamp
    /// Calls `action` once `deadline` has passed, unless the returned timer is cancelled first.
    /// A deadline already past fires as soon as possible.
    func schedule(at deadline: Timestamp, _ action: @escaping @Sendable () -> Void) -> any ScheduledTimer
}

/// A timer a ``HostClock`` scheduled.
public protocol ScheduledTimer: Sendable {
    /// Prevents the action from running if it has not run yet.
    func cancel()
}

/// Real time: `CLOCK_REALTIME` for deadlines, a sleeping task per timer.
public struct WallClock: HostClock {
    /// The system's real-time clock.
    public init() {}

    public func now() -> Timestamp {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Timestamp(sinceEpoch: .seconds(Int64(spec.tv_sec)) + .nanoseconds(Int64(spec.tv_nsec)))
    }

    public func schedule(at deadline: Timestamp, _ action: @escaping @Sendable () -> Void) -> any ScheduledTimer {
        let delay = deadline - now()
        let task = Task {
            if delay > .zero {
                do { try await Task.sleep(for: delay) } catch { return }
            }
            guard !Task.isCancelled else { return }
            action()
        }
        return TaskTimer(task: task)
    }

    private struct TaskTimer: ScheduledTimer {
        let task: Task<Void, Never>
        func cancel() { task.cancel() }
    }
}
