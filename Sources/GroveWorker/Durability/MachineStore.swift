import GroveCluster
package import GroveWire

/// Where a worker keeps what its durable machines need to come back after a crash: one record
/// per instance, a journal of events for `journal` machines, and the events quarantined as
/// poison. SQLite (``SQLiteMachineStore``) is the embedded default; a shared store for many
/// hosts implements the same protocol.
///
/// The worker calls a store from its I/O loop's thread only, one call at a time: a store needs
/// no locking of its own. Bytes are opaque to the store: the worker encodes records and events.
package protocol MachineStore: AnyObject, Sendable {
    /// Every record stored, for recovery when the worker starts.
    func records() throws(StoreError) -> [MachineRecord]
    /// Every record but those that may wait in the store for a message: a keyed instance of
    /// one of `resting` (machines that passivate) whose record holds only its state
    /// (``MachineRecord/holdsOnlyState``). What recovery at start brings back (issue 37): a
    /// worker with a million idle keys stored restarts with only those that must run.
    func records(leavingResting resting: Set<String>) throws(StoreError) -> [MachineRecord]
    /// The address and type of every keyed instance of `machine` stored (for this worker):
    /// what the coordinator is told a worker hosts, passivated instances included.
    func keyedInstances(of machine: String) throws(StoreError) -> [StoredInstance]
    /// The record of `address`, or nil when there is none: how a passivated instance comes back.
    func record(of address: String) throws(StoreError) -> MachineRecord?
    /// The record of `address`, made this worker's in the same transaction whoever held it:
    /// how a worker adopts a keyed instance handed off from another (issue 37). The previous
    /// holder's later commits for it are refused (`rejected`, `GR002` in PostgreSQL). A store
    /// no other worker shares holds only this worker's records: ``record(of:)``.
    /// - Throws: ``StoreError`` `fenced` when a newer process of this worker opened the store.
    func claim(_ address: String) throws(StoreError) -> MachineRecord?
    /// Those of `addresses` whose record another worker owns now (handoff): what a worker
    /// that registers again after a pause or a partition drops from memory. A store no other
    /// worker shares: none.
    func movedAway(among addresses: [String]) throws(StoreError) -> Set<String>
    /// Those of `addresses` whose record holds more than its state (a timer, an io call, a
    /// queued or postponed event: ``MachineRecord/holdsOnlyState`` is false), whoever owns it:
    /// the instances handed back to their own worker that it takes from the store at once, so
    /// their work runs without waiting for a message. A store no other worker shares never
    /// hands instances back: none.
    func withWorkDue(among addresses: [String]) throws(StoreError) -> [String]
    /// The journal of `address` after `sequence`, oldest first. An entry at or before the
    /// sequence of its address's record is covered by that record: a store may drop it at any
    /// time, truncated or not, and does not keep entries of an address without a record across
    /// a restart.
    func journal(of address: String, after sequence: UInt64) throws(StoreError) -> [JournalEntry]
    /// The answers kept for the idempotency keys `address` applied (``AnswerWindow``), in any
    /// order; empty when none.
    func answers(of address: String) throws(StoreError) -> [AnswerEntry]
    /// Writes all of `commit` in one transaction, or nothing of it, and returns once it lasts
    /// as `commit.flush` asks. Its parts apply in this order: `removed`, `records`, `journal`,
    /// `truncations`, `deadLetters`, `forgottenAnswers`, `answers` (so a machine removed and
    /// created again in one batch keeps its new record and answers, and a snapshot can
    /// truncate the entries appended with it). A removed machine's answers go with it. A
    /// shared store refuses (`rejected`) a commit that writes a machine another worker owns,
    /// naming every such address in ``StoreError/refused``.
    func commit(_ commit: StoreCommit) throws(StoreError)
    /// The events quarantined as poison, oldest first.
    func deadLetters() throws(StoreError) -> [DeadLetter]
    /// Removes and returns the dead letter `id`; nil when there is none.
    func removeDeadLetter(_ id: Int64) throws(StoreError) -> DeadLetter?
    /// Counts one more death of the worker while `address` ran the event `identity` names
    /// (``RecordedRun/identity``), and returns how many are counted now.
    func countCrash(of address: String, event identity: [UInt8], at time: Int64) throws(StoreError) -> Int
    /// Forgets the deaths counted for that event: it ran to the end, or it was quarantined.
    func forgetCrashes(of address: String, event identity: [UInt8]) throws(StoreError)
    /// The events with deaths counted and not forgotten, oldest first.
    func crashes() throws(StoreError) -> [CrashCount]
    /// Machines (at most `limit`) whose old journal entries keep the store from freeing space
    /// no other machine needs: the worker writes a record for each, which lets them go. Empty
    /// when the store frees its journal otherwise (the default).
    func journalLaggards(limit: Int) -> [String]
    /// The store as people are told of it in errors: the SQLite file, or the PostgreSQL
    /// server, database and topology (never a password).
    var label: String { get }
}

extension MachineStore {
    package func journalLaggards(limit: Int) -> [String] { [] }

    package var label: String { "the worker's store" }

    /// Reads every record to find one: correct for a store without an index on addresses,
    /// which should implement its own.
    package func record(of address: String) throws(StoreError) -> MachineRecord? {
        try records().first { $0.address == address }
    }

    package func claim(_ address: String) throws(StoreError) -> MachineRecord? {
        try record(of: address)
    }

    /// Filters ``records()``: correct for a store without an index of its own.
    package func records(leavingResting resting: Set<String>) throws(StoreError) -> [MachineRecord] {
        try records().filter { !$0.mayRest(resting) }
    }

    /// Filters ``records()``: correct for a store without an index on addresses.
    package func keyedInstances(of machine: String) throws(StoreError) -> [StoredInstance] {
        try records().filter { KeyedRange(machine).contains($0.address) }.map { StoredInstance(address: $0.address, type: $0.type) }
    }

    package func movedAway(among addresses: [String]) throws(StoreError) -> Set<String> { [] }

    package func withWorkDue(among addresses: [String]) throws(StoreError) -> [String] { [] }
}

/// Deaths of a worker counted against one event of one machine.
package struct CrashCount: Sendable, Hashable {
    package var address: String
    /// ``RecordedRun/identity``.
    package var event: [UInt8]
    package var count: Int
    /// The last death, in milliseconds since 1970.
    package var time: Int64

    package init(address: String, event: [UInt8], count: Int, time: Int64) {
        self.address = address
        self.event = event
        self.count = count
        self.time = time
    }
}

/// One machine instance at rest: its snapshot (state, timers, io in flight) as the worker
/// encoded it.
package struct MachineRecord: Sendable, Hashable {
    package var address: String
    /// The machine's type name in the topology (`machines[].type`).
    package var type: String
    package var snapshot: [UInt8]
    /// The journal sequence of the last event the snapshot includes; 0 without a journal.
    package var sequence: UInt64

    package init(address: String, type: String, snapshot: [UInt8], sequence: UInt64 = 0) {
        self.address = address
        self.type = type
        self.snapshot = snapshot
        self.sequence = sequence
    }
}

/// One event of a `journal` machine, written before it is acknowledged.
package struct JournalEntry: Sendable, Hashable {
    package var address: String
    /// 1 for a machine's first event, then one more for each.
    package var sequence: UInt64
    /// The event as ``RecordedRun/identity`` has it: a codec byte (1 GroveWire's binary
    /// codec, 2 JSON), then the event as the machine's `Codable` Event encodes it.
    package var event: [UInt8]
    /// When the event's turn was committed, in milliseconds since 1970 (for people; recovery
    /// does not use it).
    package var time: Int64

    package init(address: String, sequence: UInt64, event: [UInt8], time: Int64) {
        self.address = address
        self.sequence = sequence
        self.event = event
        self.time = time
    }
}

/// How long a commit lasts once ``MachineStore/commit(_:)`` returns.
package enum StoreFlush: Sendable, Hashable {
    /// Written to the operating system: survives the worker process (kill -9), not a power loss.
    case process
    /// On disk (fsync): survives the host too.
    case disk
}

extension StoreFlush {
    /// The flush a topology's `durability.flush` (carried by the welcome) asks for.
    package init(_ flush: DurabilityFlush) {
        switch flush {
        case .process: self = .process
        case .disk: self = .disk
        }
    }
}

/// What one group commit writes, all or nothing.
package struct StoreCommit: Sendable {
    /// Records to insert or replace, by address.
    package var records: [MachineRecord] = []
    /// Journal entries to append.
    package var journal: [JournalEntry] = []
    /// Journal entries to delete: those of `address` up to and including `through` (already in
    /// its record's snapshot).
    package var truncations: [(address: String, through: UInt64)] = []
    /// Machines that ended (stopped, terminal, or no longer placed here): record and journal go.
    package var removed: [String] = []
    /// Events to quarantine; their `id` is assigned by the store.
    package var deadLetters: [DeadLetter] = []
    /// Answers of idempotency keys to keep (insert, or replace by address and key), in the
    /// commit of the state they report.
    package var answers: [(address: String, entry: AnswerEntry)] = []
    /// Kept answers that left their instance's window, by address and key.
    package var forgottenAnswers: [(address: String, key: IdempotencyKey)] = []
    package var flush = StoreFlush.process

    package init() {}

    package var isEmpty: Bool {
        records.isEmpty && journal.isEmpty && truncations.isEmpty && removed.isEmpty && deadLetters.isEmpty
            && answers.isEmpty && forgottenAnswers.isEmpty
    }

    /// How many writes it holds (records, journal entries, truncations, removals, dead
    /// letters, answers kept and forgotten): the size the metrics'
    /// `grove_worker_store_commit_writes` counts.
    package var writeCount: Int {
        records.count + journal.count + truncations.count + removed.count + deadLetters.count + answers.count + forgottenAnswers.count
    }
}

/// An event that crashed its worker, kept with why so that an admin can drop or retry it.
package struct DeadLetter: Sendable, Hashable {
    /// Assigned by the store; nil until stored.
    package var id: Int64?
    package var address: String
    package var type: String
    package var event: [UInt8]
    /// Whether `event` is in GroveWire's binary codec (else JSON).
    package var binary: Bool
    /// What happened, for people: e.g. "the worker died (signal 4) twice while running it".
    package var error: String
    /// How many times the worker died running it.
    package var crashes: Int
    /// When it was quarantined, in milliseconds since 1970.
    package var time: Int64

    package init(id: Int64? = nil, address: String, type: String, event: [UInt8], binary: Bool, error: String,
                 crashes: Int, time: Int64) {
        self.id = id
        self.address = address
        self.type = type
        self.event = event
        self.binary = binary
        self.error = error
        self.crashes = crashes
        self.time = time
    }
}

/// Why a store could not read or write, with what to do about it. Equality compares the code.
package struct StoreError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of failure it is, for the code that reacts to it (a worker refuses to start on
    /// `locked`, say); the message is for people.
    package enum Code: String, Sendable, Hashable {
        /// Another process holds the store: a second worker with the same name.
        case locked
        /// The file or its directory cannot be created, opened or written: permissions, a
        /// read-only file system, a path that is not a directory.
        case permission
        /// The disk (or the quota) is full.
        case full
        /// The file was written by a newer Grove, whose format this one does not know.
        case newerVersion = "newer-version"
        /// The file is not a Grove store, or is damaged.
        case corrupt
        /// A commit broke the store's rules (a journal entry written twice): a bug in the caller.
        case rejected
        /// The store was closed.
        case closed
        /// A newer process of the same worker took the store over (a shared store's epoch
        /// moved on): this one must stop writing.
        case fenced
        /// Anything else the file system or SQLite reported.
        case failed
    }

    package var code: Code
    package var message: String
    /// For `rejected`: the addresses of the commit that another worker of a shared store now
    /// owns (adopted in a handoff). The commit was rolled back whole; committed again without
    /// them (``StoreCommit/excluding(_:)``), the rest lands. Empty for any other refusal.
    package var refused: [String] = []

    package init(_ message: String, code: Code = .failed) {
        self.code = code
        self.message = message
    }

    package var description: String { message }

    package static func == (lhs: StoreError, rhs: StoreError) -> Bool { lhs.code == rhs.code }
    package func hash(into hasher: inout Hasher) { hasher.combine(code) }
}
