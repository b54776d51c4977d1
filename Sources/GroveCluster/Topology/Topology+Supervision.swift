extension Topology {
    /// How `fsm-launch` keeps a group's worker processes running, in the manner of an OTP
    /// supervisor: restart what exits, with backoff, until the group exits too often.
    ///
    /// Exits of any instance of the group count together against ``intensity`` (a group is one
    /// supervisor, its instances its children). A worker that stops answering its heartbeats
    /// (hung, or stopped with SIGSTOP) is killed with SIGKILL and restarted by the same rules.
    public struct Supervision: Sendable, Equatable {
        /// What happens when a group exits more often than its ``intensity`` allows, or a worker
        /// exits with one of the ``finalExitCodes``.
        public enum GiveUp: String, Sendable, Equatable, CaseIterable {
            /// `fsm-launch` stops the coordinator and every worker and exits with status 3, so
            /// that what runs it (systemd, Kubernetes) restarts the whole topology.
            case escalate
            /// The worker stays down and its machines unavailable; `fsm-launch` keeps serving the
            /// rest and logs the loss as an error.
            case stayDown = "stay-down"
        }

        /// How long `fsm-launch` waits before restarting a worker that exited.
        public struct Backoff: Sendable, Equatable {
            /// The first wait, in milliseconds; 0 restarts at once. Defaults to 100.
            public var initialMs: Int
            /// The longest wait, in milliseconds: each restart in a row doubles the wait up to
            /// this. Defaults to 5000.
            public var maxMs: Int
            /// Milliseconds a worker must have run for its next restart to wait ``initialMs``
            /// again. Defaults to 10000.
            public var resetAfterMs: Int

            /// - Parameters:
            ///   - initialMs: The first wait.
            ///   - maxMs: The longest wait.
            ///   - resetAfterMs: How long a stable run resets the wait.
            public init(initialMs: Int = 100, maxMs: Int = 5000, resetAfterMs: Int = 10_000) {
                self.initialMs = initialMs
                self.maxMs = maxMs
                self.resetAfterMs = resetAfterMs
            }

            /// The wait before the restart that follows `restartsInRow` earlier ones:
            /// ``initialMs`` doubled that often, at most ``maxMs``.
            public func delay(afterRestartsInRow restartsInRow: Int) -> Duration {
                var milliseconds = initialMs
                for _ in 0..<max(0, restartsInRow) where milliseconds < maxMs { milliseconds *= 2 }
                return .milliseconds(min(milliseconds, maxMs))
            }
        }

        /// Exits allowed within ``periodMs``; one more and the group gives up. Defaults to 5.
        public var intensity: Int
        /// The window, in milliseconds, over which exits are counted. Defaults to 10000.
        public var periodMs: Int
        /// The waits between restarts.
        public var backoff: Backoff
        /// Exit statuses after which restarting cannot help (a refused command line, a refused
        /// registration): the worker is not restarted and ``onGiveUp`` applies. Defaults to the
        /// final ones of ``WorkerExitStatus``: 2 and 64 (usage errors) and 78 (configuration).
        public var finalExitCodes: [Int32]
        /// What giving up means. Defaults to ``GiveUp/escalate``, as an OTP supervisor that
        /// reaches its intensity terminates itself.
        public var onGiveUp: GiveUp

        /// - Parameters:
        ///   - intensity: Exits allowed within the period.
        ///   - periodMs: The counting window.
        ///   - backoff: The waits between restarts.
        ///   - finalExitCodes: Exit statuses that are never restarted.
        ///   - onGiveUp: What giving up means.
        public init(
            intensity: Int = 5,
            periodMs: Int = 10_000,
            backoff: Backoff = Backoff(),
            finalExitCodes: [Int32] = WorkerExitStatus.final,
            onGiveUp: GiveUp = .escalate
        ) {
            self.intensity = intensity
            self.periodMs = periodMs
            self.backoff = backoff
            self.finalExitCodes = finalExitCodes
            self.onGiveUp = onGiveUp
        }
    }
}
