/// `location`: where a machine lives, the coordinator's answer to `locate` (docs/PROTOCOL.md,
/// "Locating a machine"). The workers are the machine's group in placement order, so a client
/// computes a key's worker as the coordinator does: the key's home among all of them, or, when
/// the home is `handed-off`, among those not handed off.
public struct Location: Codable, Sendable, Hashable {
    /// One worker instance of the machine's group.
    public struct Worker: Codable, Sendable, Hashable {
        /// What the coordinator knows of the worker now.
        public enum State: String, Codable, Sendable, Hashable {
            /// Registered, serving a direct route at ``Worker/endpoint``.
            case registered
            /// Not registered (starting, restarting or lost, within any handoff grace).
            case lost
            /// Lost past `durability.handoff.graceMs`: its keyed durable instances are placed on
            /// the group's other workers.
            case handedOff = "handed-off"
            /// Registered without a direct endpoint: reach its machines through the coordinator.
            case noDirect = "no-direct"
        }

        public var name: String
        public var state: State
        /// Its direct endpoint; only for `registered`.
        public var endpoint: String?
        /// Its CURVE public key (Z85), as it registered with it; only for `registered` under CURVE.
        public var serverKey: String?
        /// Its process's incarnation (unsigned 64-bit); only for `registered`.
        public var incarnation: UInt64?

        public init(name: String, state: State, endpoint: String? = nil, serverKey: String? = nil, incarnation: UInt64? = nil) {
            self.name = name
            self.state = state
            self.endpoint = endpoint
            self.serverKey = serverKey
            self.incarnation = incarnation
        }
    }

    /// The machine's name (without a key, whatever address was asked).
    public var machine: String
    public var keyed: Bool
    /// The coordinator's count of registrations, losses and handoff changes: two answers with the
    /// same generation agree.
    public var generation: Int
    /// The topology's `heartbeat.timeoutMs`.
    public var heartbeatMs: Int
    /// The machine's group in placement order; one entry for a single machine.
    public var workers: [Worker]
    /// Workers whose keyed instances are being handed back to them from the worker that adopted
    /// them: a key homed on one of these goes by the coordinator until a later `location` no
    /// longer lists it.
    public var handingBack: [String]

    public init(machine: String, keyed: Bool, generation: Int, heartbeatMs: Int, workers: [Worker], handingBack: [String] = []) {
        self.machine = machine
        self.keyed = keyed
        self.generation = generation
        self.heartbeatMs = heartbeatMs
        self.workers = workers
        self.handingBack = handingBack
    }
}
