/// How much of a machine instance survives its worker process, set per machine in a topology
/// (`machines[].durability`). PROTOCOL.md says exactly what each level promises.
public enum Durability: String, Codable, Sendable, Hashable, CaseIterable {
    /// Nothing is written: a restarted worker starts the machine from its initial state.
    case none
    /// The state the machine committed after its last event, with its pending timers and the io
    /// it had in flight, written once per received batch (coalesced per machine) before the
    /// batch's replies leave.
    case state
    /// Each event is written to a journal before it is acknowledged; the state is written every
    /// `snapshotEvery` events, and recovery replays the journal after it.
    case journal
}

/// When a commit of durable machines counts as done, for the whole topology
/// (`durability.flush`).
public enum DurabilityFlush: String, Codable, Sendable, Hashable, CaseIterable {
    /// Written to the operating system (SQLite WAL, `synchronous = NORMAL`): survives the worker
    /// being killed (kill -9), not the host losing power.
    case process
    /// Synced to the disk (fsync on every commit): survives the host too, at the disk's pace.
    case disk
}
