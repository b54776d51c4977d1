/// Where the journal of one `journal` instance stands, and what its next group commit writes:
/// the events it ran since, appended, or its whole record (a snapshot) in their place.
///
/// Pure: the hosted instance feeds it each event as the event runs (``ran(_:)``, from the
/// host's recorder) and asks at each commit (``write(holdsOnlyState:snapshotEvery:)``).
///
/// The rule that makes recovery simple: events are appended only while the instance holds
/// nothing but its state at the commit (no timer, no io or work in flight, nothing queued).
/// Then its state after them is its record's state with every event after the record's
/// sequence applied in order (`update` is pure), and nothing else is pending. When it holds
/// more, the record is written instead (timers at their absolute deadlines, io in flight, the
/// queue: what `state` writes), with the sequence of the last event it includes; the journal
/// through that sequence is truncated in the same commit. So after any commit, either the
/// journal after the record is empty (recover from the record) or the instance held only its
/// state (recover the state by replaying, pending nothing).
struct JournalCursor: Sendable {
    /// The sequence of the last event run (0 before the first).
    private(set) var sequence: UInt64
    /// Events in the journal after the stored record's sequence.
    private(set) var sinceRecord: Int
    /// Whether the store holds a record of this instance (written by it or recovered): until
    /// it does, recovery would not find the instance, so its first write is a record.
    private(set) var hasRecord: Bool
    /// The events run since the last write, by sequence, each as ``RecordedRun/identity``.
    private var pending: [JournalEvent] = []
    /// An event ran that could not be encoded, or the store asked for a record (its journal
    /// entries hold space back): the next write must be a record.
    private var unjournaled = false

    /// A new instance: nothing stored.
    init() {
        self.init(sequence: 0, sinceRecord: 0, hasRecord: false)
    }

    /// An instance recovered from a record of `sequence` and `replayed` journal entries after it.
    init(recoveredThrough sequence: UInt64, replayed: Int) {
        self.init(sequence: sequence, sinceRecord: replayed, hasRecord: true)
    }

    private init(sequence: UInt64, sinceRecord: Int, hasRecord: Bool) {
        self.sequence = sequence
        self.sinceRecord = sinceRecord
        self.hasRecord = hasRecord
    }

    /// An event ran: it takes the next sequence. `event` is its identity (codec byte, then the
    /// bytes); nil when it could not be encoded, which makes the next write a record.
    mutating func ran(_ event: [UInt8]?) {
        sequence += 1
        if let event {
            pending.append(JournalEvent(sequence: sequence, event: event))
        } else {
            unjournaled = true
        }
    }

    /// The store asked for a record (``MachineStore/journalLaggards(limit:)``): the next write
    /// is one, so that the journal entries before it can go.
    mutating func recordNext() {
        unjournaled = true
    }

    /// What the next commit writes.
    enum Write: Sendable, Hashable {
        /// The instance's record, including every event through `through` (its
        /// ``MachineRecord/sequence``); the journal through it is truncated. `first`: the store
        /// may hold what an earlier life of the address left (a record that did not decode,
        /// its journal): that goes first. `events` are those it includes that ran since the
        /// last write: appended instead should the record not encode.
        case record(through: UInt64, first: Bool, events: [JournalEvent])
        /// These events appended to the journal, the record kept.
        case append([JournalEvent])
    }

    /// One event to append.
    struct JournalEvent: Sendable, Hashable {
        var sequence: UInt64
        var event: [UInt8]
    }

    /// What to write now, and the cursor moved past it.
    /// - Parameters:
    ///   - holdsOnlyState: Whether the instance holds nothing but its state now.
    ///   - snapshotEvery: The topology's `durability.snapshotEvery`.
    mutating func write(holdsOnlyState: Bool, snapshotEvery: Int) -> Write {
        let events = pending
        pending = []
        defer { unjournaled = false }
        // Nothing ran yet it changed (a queued event, a cancelled timer): only a record says so.
        let recordNeeded = !hasRecord || events.isEmpty || unjournaled || !holdsOnlyState
        if recordNeeded || sinceRecord + events.count >= max(snapshotEvery, 1) {
            let first = !hasRecord
            hasRecord = true
            sinceRecord = 0
            return .record(through: sequence, first: first, events: events)
        }
        sinceRecord += events.count
        return .append(events)
    }

    /// The record that ``write(holdsOnlyState:snapshotEvery:)`` asked for could not be encoded
    /// (its snapshot holds a value the codecs refuse): its events were appended instead when the
    /// store has a record to replay them on, else nothing was written.
    mutating func recordNotWritten(first: Bool, appended: Int) {
        hasRecord = !first
        sinceRecord += first ? 0 : appended
    }
}
