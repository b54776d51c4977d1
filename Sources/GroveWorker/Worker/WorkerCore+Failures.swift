import GroveCluster

/// What the runtime met failing: a store, an audit log, a flight recorder. The runtime catches
/// the error and reports it here (``WorkerCore/failed(_:)``); which failure ends the worker, with
/// which ``WorkerExitReason``, and which is only logged, is the core's rule.
enum WorkerFailure: Sendable, Equatable {
    /// A welcome placed durable machines here and the worker has no data directory.
    case noStore
    /// The store could not be opened, or its records read, when durable machines were first
    /// placed here.
    case storeOpen(String)
    /// The store refused the commit of a turn's durable writes.
    case storeWrite(String)
    /// The store could not give the journal of the `journal` instance at `address`, coming back.
    case journalRead(address: String, String)
    /// The stored record or journal of the instance at `address` was read and does not decode
    /// (a bad codec byte, a state of another shape, a run the store calls corrupt): `message`
    /// is the error its events are answered with (``WireError/unreadableRecord(address:store:worker:why:)``).
    case recordUnreadable(address: String, message: String)
    /// The store refused the commit that quarantines an event at `address` (its dead letter and
    /// the machine's record without it): nothing of it was stored.
    case quarantineWrite(address: String, String)
    /// The audit log could not be opened at a welcome.
    case auditOpen(String)
    /// The audit log refused a turn's lines.
    case auditWrite(String)
    /// The flight recorder could not be opened when the worker started.
    case recorderOpen(String)
    /// The store could not count a crash against the event the last process died running.
    case crashCount(String)
    /// The store could not forget the crashes of an event that ran to the end.
    case crashForget(String)
    /// The store's dead letters or crash counts could not be read when it opened.
    case poisonUnreadable(String)
}

extension WorkerCore {
    /// What follows a failure the runtime met. Crash-only, as OTP would have it: a store or an
    /// audit log that loses what the worker promised (a commit, a line, a journal) ends the
    /// worker before the replies it held leave, so its supervisor restarts it from what the
    /// store holds (``WorkerExitStatus/storage``); one that cannot be opened at all is a
    /// configuration error, not restarted (``WorkerExitStatus/configuration``). What only
    /// weakens poison detection (a crash not counted, a suspect not forgotten, a recorder that
    /// will not open) is logged, and the worker serves on.
    func failed(_ failure: WorkerFailure) -> [WorkerAction] {
        switch failure {
        case .noStore:
            [.exit(.noDataDirectory(worker: worker))]
        case .storeOpen(let why):
            [.exit(.storeUnusable(worker: worker, why))]
        case .storeWrite(let why):
            [.exit(.storeWriteFailed(worker: worker, why))]
        case .journalRead(let address, let why):
            // Started without its journal the instance would lose acknowledged events, and its
            // first record would bury them.
            [.exit(.journalUnreadable(worker: worker, address: address, why))]
        case .recordUnreadable(_, let message):
            // Only that instance: the store is fine, one record in it is not. Ending the worker
            // would end every other machine for nothing (a restart reads the same bytes), and
            // starting the instance afresh would write over what it acknowledged.
            [.log(.error, message)]
        case .quarantineWrite(let address, let why):
            // Running on would leave the event in the stored record for the next start to run a
            // third time; the count kept in the store lets the next process quarantine it first.
            [.exit(.quarantineUnwritten(worker: worker, address: address, why))]
        case .auditOpen(let why):
            [.exit(.auditLogUnusable(worker: worker, why))]
        case .auditWrite(let why):
            [.exit(.auditWriteFailed(worker: worker, why))]
        case .recorderOpen(let why):
            [.log(.error, "worker \(worker) cannot open its flight recorder, so a crash cannot be attributed to the event that caused it: \(why)")]
        case .crashCount(let why):
            [.log(.error, "worker \(worker) could not count a crash in its store: \(why)")]
        case .crashForget(let why):
            [.log(.warning, "worker \(worker) could not forget a crash in its store: \(why)")]
        case .poisonUnreadable(let why):
            [.log(.error, "worker \(worker) cannot read its dead letters: \(why); quarantined events are not refused")]
        }
    }
}
