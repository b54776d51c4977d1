/// How an instance of a machine with `onEnd: "restart"` is restarted (`machines[].restart` in a
/// topology, carried by the welcome): after a backoff that grows while it keeps ending, and not
/// past a restart intensity, as an OTP supervisor's `intensity` and `period`. The defaults are
/// those of a worker group's `supervision`: 5 ends in 10 s, waits from 100 ms doubling to 5 s.
///
/// ```json
/// "restart": { "intensity": 5, "periodMs": 10000, "backoff": { "initialMs": 100, "maxMs": 5000 } }
/// ```
public struct RestartPolicy: Codable, Sendable, Hashable {
    /// The wait before a restart: ``initialMs`` for an instance with no earlier end within
    /// ``RestartPolicy/periodMs``, doubled for each earlier one, at most ``maxMs``.
    public struct Backoff: Codable, Sendable, Hashable {
        /// The first wait, in milliseconds; 0 restarts at the worker's next tick. Defaults to 100.
        public var initialMs: Int
        /// The longest wait, in milliseconds; at least ``initialMs``. Defaults to 5000.
        public var maxMs: Int

        /// - Parameters:
        ///   - initialMs: The first wait.
        ///   - maxMs: The longest wait.
        public init(initialMs: Int = 100, maxMs: Int = 5000) {
            self.initialMs = initialMs
            self.maxMs = maxMs
        }
    }

    /// Ends allowed within ``periodMs``; one more and the instance stays ended until an admin
    /// restarts it. 0: it is never restarted by the policy. Defaults to 5.
    public var intensity: Int
    /// The window, in milliseconds, over which ends are counted; an instance that runs this long
    /// without ending starts over at ``Backoff/initialMs``. Defaults to 10000.
    public var periodMs: Int
    /// The waits before restarts.
    public var backoff: Backoff

    /// - Parameters:
    ///   - intensity: Ends allowed within the period.
    ///   - periodMs: The counting window.
    ///   - backoff: The waits before restarts.
    public init(intensity: Int = 5, periodMs: Int = 10_000, backoff: Backoff = Backoff()) {
        self.intensity = intensity
        self.periodMs = periodMs
        self.backoff = backoff
    }
}
