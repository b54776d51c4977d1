import GroveCluster
@_spi(GroveInternal) import GroveWire

/// How the event the last process died running is counted and, once judged poison
/// (``WorkerCore/judge(_:crashes:type:now:)``), taken out of its machine's stored state. Pure:
/// the runtime reads the store and the flight recorder, asks here, commits what it is told
/// (`WorkerRuntime+Poison.swift`).
extension WorkerCore {
    /// The type of the machine at `address`: as the last welcome placed it here, else as its
    /// stored record says (a machine no longer placed here); nil when neither knows it.
    func machineType(at address: String, records: [MachineRecord]) -> String? {
        placed[MachineAddress.machine(of: address)]?.type ?? records.first { $0.address == address }?.type
    }

    /// Whether the death of the last process is counted against `run` in the store: only a
    /// machine the store keeps (a record, or placed durable) has a count to keep. Another's
    /// crash was reported with the registration (``crashReport``), which is all there is to do
    /// with it.
    func countsCrash(of run: RecordedRun, records: [MachineRecord]) -> Bool {
        records.contains { $0.address == run.address }
            || (placed[MachineAddress.machine(of: run.address)]?.durability ?? .none) != .none
    }

    /// `run` with its event as its machine's type encodes it (decoded, encoded again), which is
    /// what the crash counts, the suspects and the quarantine compare: the recorder keeps an
    /// event from the wire as its sender wrote it, in either codec, JSON with any spacing or key
    /// order. Unchanged, with the warning to log, when the type is unknown or the event no
    /// longer decodes as its event.
    /// - Parameters:
    ///   - type: ``machineType(at:records:)``.
    ///   - codec: That type's, nil when this worker does not register it.
    func canonical(_ run: RecordedRun, type: String?, codec: (any StoredEventCodec)?) -> (run: RecordedRun, warning: String?) {
        guard !run.event.isEmpty else { return (run, nil) }
        guard let type, let codec else {
            return (run, "worker \(worker) does not know the type of \(run.address); the event it died running is blamed as recorded")
        }
        guard let canonical = codec.canonical(event: run.event, binary: run.binary) else {
            return (run, "the event worker \(worker) died running on \(run.address) no longer decodes as a \(type) event; blamed as recorded")
        }
        var blamed = run
        (blamed.event, blamed.binary) = canonical
        return (blamed, nil)
    }

    /// What quarantining an event writes, in one commit.
    struct QuarantinePlan {
        /// The dead letter, the machine's record without the event (and the journal entries
        /// the record now covers), at the welcome's flush.
        var commit: StoreCommit
        /// The machine's stored record as the commit leaves it; nil when it is unchanged.
        var record: MachineRecord?
        var taken: QuarantineTaking
        /// What to log once the commit (and forgetting the event's crashes) succeeded.
        var line: String
    }

    /// How the event of `run` (canonical), judged poison as `letter`, is taken out of its
    /// machine's stored state so that recovery does not run it again. A `journal` machine with
    /// entries after its record replays them, not its record's queue (which they include): the
    /// event is skipped there, and the record goes back to the state before it. Otherwise the
    /// event is taken out of the record (its queue, timers, interrupted io; or, for an event of
    /// the machine's work, its re-issued io made interrupted). Neither when the record does
    /// not hold it: the dead letter alone then refuses it.
    /// - Parameters:
    ///   - crashes: How many deaths were counted against it, for the log line.
    ///   - record: The machine's stored record; nil when it has none.
    ///   - journal: Its journal after the record's sequence, oldest first (empty without one).
    ///   - codec: The record's type's; nil when this worker does not register it.
    func quarantinePlan(_ run: RecordedRun, letter: DeadLetter, crashes: Int, record: MachineRecord?, journal: [JournalEntry],
                        codec: (any StoredEventCodec)?) -> QuarantinePlan {
        var commit = StoreCommit()
        commit.flush = commitFlush
        commit.deadLetters = [letter]
        var changed: MachineRecord?
        var taken = QuarantineTaking.nothing
        if let record, let codec {
            if !journal.isEmpty {
                if let skipped = codec.skipping(run.identity, record: record, journal: journal) {
                    changed = skipped
                    commit.records = [skipped]
                    commit.truncations = [(record.address, skipped.sequence)]
                    taken = .fromJournal
                }
            } else if let rewritten = codec.removing(run.identity, fromWork: run.origin == .effect, from: record.snapshot) {
                var removed = record
                removed.snapshot = rewritten
                changed = removed
                commit.records = [removed]
                taken = .fromRecord
            }
        }
        return QuarantinePlan(commit: commit, record: changed, taken: taken, line: quarantined(run, crashes: crashes, taken: taken))
    }
}
