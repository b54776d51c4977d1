/// `welcome.audit`: which machines placed on a worker have their committed transitions written
/// to its audit log, and how (the topology's `audit` and `machines[].audit`). Absent when no
/// machine placed there is audited.
public struct AuditPlacement: Codable, Sendable, Hashable {
    /// The names of the audited machines placed on the worker (every instance of a keyed one).
    public var machines: [String]
    /// Whether each line also carries the state after the transition (redacted when it has
    /// secrets); the digests are always there.
    public var states: Bool
    /// When a written line counts as kept: `process` (handed to the operating system) or
    /// `disk` (synced, an fsync per write).
    public var flush: DurabilityFlush

    /// - Parameters:
    ///   - machines: The audited machines' names.
    ///   - states: Whether lines carry the state after each transition.
    ///   - flush: When a written line counts as kept.
    public init(machines: [String], states: Bool = false, flush: DurabilityFlush = .process) {
        self.machines = machines
        self.states = states
        self.flush = flush
    }
}
