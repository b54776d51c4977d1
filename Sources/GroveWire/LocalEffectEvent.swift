/// `effect`, published on topic `effect:<address>` for work its machine's own worker runs:
/// timers, operations, tasks, streams and io run on that worker. The worker sends it while a
/// watcher of the topic exists; the coordinator takes it only from the worker hosting the
/// address, and republishes it. Told apart from an ``EffectEvent`` (io that crosses processes,
/// written by the coordinator) by its `kind`.
public struct LocalEffectEvent: Codable, Sendable, Hashable {
    public enum Kind: String, Codable, Sendable, Hashable {
        case timer, operation, task, stream, io
    }

    public enum Phase: String, Codable, Sendable, Hashable {
        case started
        /// A timer's deadline came.
        case fired
        /// It ended on its own.
        case finished
        /// It threw.
        case failed
        /// Cancelled by id, `.cancelAll`, an admin, or the end of a state or event timeout.
        case cancelled
        /// New work took its id.
        case replaced
        /// Its machine ended.
        case ended
        /// Its instance left memory (a timer comes back with it).
        case passivated
    }

    public var address: String
    /// The worker hosting the machine, where the work runs.
    public var worker: String
    /// The effect id as the machine gave it (``EffectID``'s JSON): `"poll-fetch"`, `17`,
    /// `{"reserved":"state-timeout"}`.
    public var effect: JSONValue
    public var kind: Kind
    public var phase: Phase
    /// A timer's deadline: nanoseconds since 1970 on the worker's clock.
    public var deadlineNs: Int64?
    /// An io call's request name.
    public var request: String?

    public init(address: String, worker: String, effect: JSONValue, kind: Kind, phase: Phase, deadlineNs: Int64? = nil,
                request: String? = nil) {
        self.address = address
        self.worker = worker
        self.effect = effect
        self.kind = kind
        self.phase = phase
        self.deadlineNs = deadlineNs
        self.request = request
    }
}
