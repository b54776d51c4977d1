extension Topology {
    /// When the coordinator contains input that crashes workers (`"poison"` in a topology):
    /// each worker crash is attributed to the event its process was running, as a pattern
    /// (machine type and event case) and, for an event a client with a key sent, to that key.
    /// A pattern that crashes ``quarantineAfter`` times within ``periodMs`` is refused for every
    /// address; a key whose events crash ``suspendAfter`` times is refused `send`. The crashes
    /// that led there do not count toward the worker group's `supervision.intensity`.
    public struct PoisonSettings: Sendable, Equatable {
        /// Crashes of one pattern, at any addresses, within ``periodMs`` that quarantine it for
        /// every address; 0 never quarantines a pattern. Defaults to 2: one crash may be an
        /// operator's kill -9 landing in an innocent event, though kills from outside are not
        /// counted where fsm-launch sees them.
        public var quarantineAfter: Int
        /// Crashes attributed to one client key's events within ``periodMs`` that suspend the
        /// key (its events are refused `forbidden` until an admin lifts it); 0 never suspends.
        /// Defaults to 2.
        public var suspendAfter: Int
        /// How long a crash counts, in milliseconds. Defaults to 600000 (10 minutes): a slow
        /// attack, one crash a minute, is contained as a fast one is.
        public var periodMs: Int

        /// The bounds of ``quarantineAfter`` and ``suspendAfter``.
        public static let crashesRange = 0...1000

        /// - Parameters:
        ///   - quarantineAfter: Crashes of one pattern that quarantine it (0: never).
        ///   - suspendAfter: Crashes of one key's events that suspend it (0: never).
        ///   - periodMs: How long a crash counts.
        public init(quarantineAfter: Int = 2, suspendAfter: Int = 2, periodMs: Int = 600_000) {
            self.quarantineAfter = quarantineAfter
            self.suspendAfter = suspendAfter
            self.periodMs = periodMs
        }
    }
}
