/// What a worker's new process reports of the event its previous process died running (its
/// flight recorder's note), in its registration: the coordinator attributes the crash to the
/// event's pattern and, through `correlation`, to the client that sent it.
///
/// ```json
/// {"address":"counter/k-3","type":"Counter","event":"add","origin":"sent","correlation":72057594037927937}
/// ```
@_spi(GroveInternal) public struct CrashReport: Codable, Sendable, Hashable {
    /// The machine that was running the event.
    public var address: String
    /// The machine's type name as the topology places it; absent when the record did not say.
    public var type: String?
    /// The event's case: the one key of the object its machine's `Codable` Event encodes it as
    /// (`"add"` for `{"add":{"_0":5}}`), or the string it encodes as; absent when the event was
    /// not recorded (too large), no longer decodes, or encodes as something else.
    public var event: String?
    /// Where the event came from: `sent` (a client or a route), `inline`, `effect`, `timer`,
    /// `journal` (replayed by recovery) or `unknown`.
    public var origin: String
    /// The id of the request that carried the event, as the coordinator sent it, when the event
    /// ran as it arrived; absent otherwise (queued first, or not sent).
    public var correlation: UInt64?

    public init(address: String, type: String? = nil, event: String? = nil, origin: String, correlation: UInt64? = nil) {
        self.address = address
        self.type = type
        self.event = event
        self.origin = origin
        self.correlation = correlation
    }

    /// The pattern the crash is counted against; nil without a type and a case.
    public var pattern: PoisonPattern? {
        guard let type, let event else { return nil }
        return PoisonPattern(type: type, event: event)
    }
}

/// An event pattern: a machine type and one case of its events, whatever the address and the
/// associated values. What the coordinator quarantines after repeated crashes.
public struct PoisonPattern: Codable, Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The machine type, as topologies name it (`"Counter"`).
    public var type: String
    /// The event's case (`"add"`).
    public var event: String

    public init(type: String, event: String) {
        self.type = type
        self.event = event
    }

    public var description: String { "\(type).\(event)" }

    public static func < (lhs: PoisonPattern, rhs: PoisonPattern) -> Bool {
        (lhs.type, lhs.event) < (rhs.type, rhs.event)
    }
}

/// `quarantine`, coordinator → worker: every pattern quarantined for the machine types placed
/// on the worker (the whole list each time, so a lost message is made good by the next).
@_spi(GroveInternal) public struct QuarantinedPatterns: Codable, Sendable, Hashable {
    public var patterns: [PoisonPattern]

    public init(patterns: [PoisonPattern]) {
        self.patterns = patterns
    }
}

/// `poison`, an admin's request to the coordinator:
/// ```json
/// {"action": "list"}
/// {"action": "lift", "key": "rq1Z…"}
/// {"action": "release", "type": "Counter", "event": "add"}
/// ```
public struct PoisonRequest: Codable, Sendable, Hashable {
    public enum Action: String, Codable, Sendable, Hashable {
        /// Answered with a ``PoisonList``.
        case list
        /// Lifts the suspension of the client key `key`; answered `accepted`.
        case lift
        /// Releases the quarantined pattern `type`.`event`; answered `accepted`.
        case release
    }

    public var action: Action
    /// The suspended client key (Z85, 40 characters), for `lift`.
    public var key: String?
    /// The pattern's machine type and event case, for `release`.
    public var type: String?
    public var event: String?

    public init(_ action: Action, key: String? = nil, type: String? = nil, event: String? = nil) {
        self.action = action
        self.key = key
        self.type = type
        self.event = event
    }
}

/// `poison-list`: the client keys suspended and the patterns quarantined, oldest first.
public struct PoisonList: Codable, Sendable, Hashable {
    /// A client key refused `send` after the workers it crashed.
    public struct Suspension: Codable, Sendable, Hashable {
        /// The client's public key, Z85.
        public var key: String
        /// The worker crashes attributed to its events when it was suspended.
        public var crashes: Int
        /// How long ago it was suspended, in milliseconds (as of the coordinator's last tick).
        public var ageMs: Int64
        /// The patterns of the events that crashed them, when they had one.
        public var patterns: [PoisonPattern]

        public init(key: String, crashes: Int, ageMs: Int64, patterns: [PoisonPattern]) {
            self.key = key
            self.crashes = crashes
            self.ageMs = ageMs
            self.patterns = patterns
        }
    }

    /// A pattern refused for every address after the workers it crashed.
    public struct Quarantine: Codable, Sendable, Hashable {
        public var type: String
        public var event: String
        /// The worker crashes attributed to it when it was quarantined.
        public var crashes: Int
        /// How long ago it was quarantined, in milliseconds (as of the coordinator's last tick).
        public var ageMs: Int64
        /// The addresses it crashed, most recent last (at most a few).
        public var addresses: [String]

        public init(type: String, event: String, crashes: Int, ageMs: Int64, addresses: [String]) {
            self.type = type
            self.event = event
            self.crashes = crashes
            self.ageMs = ageMs
            self.addresses = addresses
        }
    }

    public var suspended: [Suspension]
    public var quarantined: [Quarantine]
    /// Client keys (Z85) refused on the events endpoint after their watchers subscribed past
    /// `limits.watcherSubscriptions`; lifted as a suspension is.
    public var refusedWatchers: [String]

    public init(suspended: [Suspension], quarantined: [Quarantine], refusedWatchers: [String] = []) {
        self.suspended = suspended
        self.quarantined = quarantined
        self.refusedWatchers = refusedWatchers
    }
}
