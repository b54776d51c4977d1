/// What the coordinator tells a worker that serves direct routes (docs/DIRECT-ROUTES.md, 1.5):
/// the welcome's ``Welcome/direct`` part, then `access` (``ClientTable``) and `placement`
/// (``PlacementView``) whenever they change. The worker judges each direct request with them
/// exactly as the coordinator judges a forwarded one.

/// The welcome's `direct` part: the numbers the coordinator answers clients by, and the pool
/// keyed instances are placed over. Present only for a worker that registered a direct
/// endpoint, in a group whose topology entry says `"direct": true`.
@_spi(GroveInternal) public struct DirectSettings: Codable, Sendable, Hashable {
    /// The topology's `limits` a client's request is held to.
    public struct Limits: Codable, Sendable, Hashable {
        public var addressBytes: Int
        public var payloadBytes: Int
        public var owedBytesPerClient: Int
        public var owedBytes: Int
        /// `limits.batchEnvelopes`; absent from an older coordinator (the worker then holds
        /// batches to the default, 10,000).
        public var batchEnvelopes: Int?
        public init(addressBytes: Int, payloadBytes: Int, owedBytesPerClient: Int, owedBytes: Int, batchEnvelopes: Int? = nil) {
            self.addressBytes = addressBytes
            self.payloadBytes = payloadBytes
            self.owedBytesPerClient = owedBytesPerClient
            self.owedBytes = owedBytes
            self.batchEnvelopes = batchEnvelopes
        }
    }

    /// The topology's `queues` that bound what waits for a client and what a worker holds.
    public struct Queues: Codable, Sendable, Hashable {
        public var clientOutbox: Int
        public var clientOutboxBytes: Int
        public var workerOutbox: Int
        public var workerOutboxBytes: Int
        public init(clientOutbox: Int, clientOutboxBytes: Int, workerOutbox: Int, workerOutboxBytes: Int) {
            self.clientOutbox = clientOutbox
            self.clientOutboxBytes = clientOutboxBytes
            self.workerOutbox = workerOutbox
            self.workerOutboxBytes = workerOutboxBytes
        }
    }

    public var limits: Limits
    public var queues: Queues
    /// The worker's group in placement order: the pool a keyed instance's key is hashed over.
    public var pool: [String]

    public init(limits: Limits, queues: Queues, pool: [String]) {
        self.limits = limits
        self.queues = queues
        self.pool = pool
    }
}

/// `access` (coordinator → worker): the topology's client keys with their grants and which
/// are suspended, the whole table each time. Sent after each welcome with a `direct` part and
/// whenever a key is admitted, suspended or lifted.
@_spi(GroveInternal) public struct ClientTable: Codable, Sendable, Hashable {
    /// One grant of a client key: roles (`read`, `send`, `admin`) over machine patterns
    /// (empty: every machine), as the topology's `security.clients` says.
    public struct Grant: Codable, Sendable, Hashable {
        public var roles: [String]
        public var machines: [String]
        public init(roles: [String], machines: [String] = []) {
            self.roles = roles
            self.machines = machines
        }
    }

    /// A client key (Z85) and its number, the coordinator's name for it in a crash report.
    public struct Client: Codable, Sendable, Hashable {
        public var key: String
        public var number: UInt32
        public var grants: [Grant]
        public init(key: String, number: UInt32, grants: [Grant]) {
            self.key = key
            self.number = number
            self.grants = grants
        }
    }

    /// A suspended key: its events are refused `forbidden`, with the coordinator's words for
    /// why (its crashes, and the patterns they were of, described).
    public struct Suspended: Codable, Sendable, Hashable {
        public var number: UInt32
        public var crashes: Int
        public var patterns: [String]
        public init(number: UInt32, crashes: Int, patterns: [String] = []) {
            self.number = number
            self.crashes = crashes
            self.patterns = patterns
        }
    }

    public var clients: [Client]
    public var suspended: [Suspended]

    public init(clients: [Client], suspended: [Suspended] = []) {
        self.clients = clients
        self.suspended = suspended
    }
}

/// `placement` (coordinator → worker): how handoff moved the keyed instances of the worker's
/// pool. Sent to the registered workers of a pool with a machine that hands off, on each
/// change.
@_spi(GroveInternal) public struct PlacementView: Codable, Sendable, Hashable {
    /// The coordinator's registrations count when it changed (as `location`'s).
    public var generation: Int
    /// Workers of the pool lost past the grace: their keys are placed over the others.
    public var handedOff: [String]
    /// Workers of the pool whose adopted instances are on their way back to them: a key homed on
    /// one of these is served by none of the pool directly until the coordinator says so.
    public var handingBack: [String]

    public init(generation: Int, handedOff: [String] = [], handingBack: [String] = []) {
        self.generation = generation
        self.handedOff = handedOff
        self.handingBack = handingBack
    }
}
