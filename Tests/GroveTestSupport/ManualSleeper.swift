package import Foundation
import Synchronization

/// A sleeper and a clock that move only when the test says so, for machines whose effects loop
/// over their own sleeps (seed 000's `PollingService`: `send(.tick)`, then sleep) instead of
/// the host's timers, which `TestClock` drives.
///
/// Inject ``sleep(for:)`` and ``now()`` where the machine's environment takes a sleeper and a
/// clock. A sleep waits until the test calls ``wake()``; ``now()`` has moved on by the sleep's
/// duration when it returns. A `wake()` with no sleep waiting is kept for the next sleep, so a
/// test need not know whether the effect has reached its sleep yet: no race, no real waiting.
///
/// ```swift
/// let sleeper = ManualSleeper()
/// let env = PollingService.Env(fetchData: { data }, sleep: { try await sleeper.sleep(for: $0) }, now: { sleeper.now() })
/// // ... the effect sleeps ...
/// sleeper.wake()   // the interval has passed
/// ```
package final class ManualSleeper: Sendable {
    private struct Sleeping {
        let id: Int
        let duration: Duration
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct Inner {
        var now: Date
        var sleeping: [Sleeping] = []
        var wakes = 0
        var requested: [Duration] = []
        var nextID = 0
    }

    private enum Outcome { case cancelled, woken, sleeping }

    private let inner: Mutex<Inner>

    /// - Parameter now: The starting time; defaults to 2023-11-14T22:13:20Z, as `TestClock`'s.
    package init(now: Date = Date(timeIntervalSince1970: 1_700_000_000)) {
        inner = Mutex(Inner(now: now))
    }

    /// The current time: the start plus every sleep that ended.
    package func now() -> Date { inner.withLock { $0.now } }

    /// Every duration a sleep was asked for, in order.
    package var requested: [Duration] { inner.withLock { $0.requested } }

    /// Waits until the test calls ``wake()`` (at once if it already did), then moves ``now()``
    /// on by `duration`.
    /// - Throws: `CancellationError` when the sleeping task is cancelled first, as `Task.sleep` does.
    package func sleep(for duration: Duration) async throws {
        let id = inner.withLock { state in
            state.requested.append(duration)
            state.nextID += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                // Decided under the lock, so that `onCancel` either sees this sleep or ran before it.
                let outcome: Outcome = inner.withLock { state in
                    if Task.isCancelled { return .cancelled }
                    guard state.wakes == 0 else {
                        state.wakes -= 1
                        state.now += duration.timeInterval
                        return .woken
                    }
                    state.sleeping.append(Sleeping(id: id, duration: duration, continuation: continuation))
                    return .sleeping
                }
                switch outcome {
                case .cancelled: continuation.resume(throwing: CancellationError())
                case .woken: continuation.resume()
                case .sleeping: break
                }
            }
        } onCancel: {
            let cancelled = inner.withLock { state -> Sleeping? in
                guard let index = state.sleeping.firstIndex(where: { $0.id == id }) else { return nil }
                return state.sleeping.remove(at: index)
            }
            cancelled?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Ends the oldest sleep in progress, or the next one to start.
    package func wake() {
        let woken = inner.withLock { state -> Sleeping? in
            guard !state.sleeping.isEmpty else {
                state.wakes += 1
                return nil
            }
            let sleeping = state.sleeping.removeFirst()
            state.now += sleeping.duration.timeInterval
            return sleeping
        }
        woken?.continuation.resume()
    }
}

extension Duration {
    /// The duration in seconds, as Foundation's `TimeInterval`.
    var timeInterval: TimeInterval {
        let (seconds, attoseconds) = components
        return TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
    }
}
