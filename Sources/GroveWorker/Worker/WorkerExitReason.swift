import GroveCluster

/// Why a worker ends by itself, as its runtime decides: the status, and the line it logs.
enum WorkerExitReason: Sendable, Equatable {
    /// The coordinator refused this process (a key, a role) or rejected its registration
    /// (its name, machines or incarnation).
    case rejected(String)
    /// A newer process holds this worker's name (``WorkerIncarnation``): a restart would
    /// displace it in turn.
    case superseded(String)
    /// The topology places durable machines here and the worker has no data directory.
    case noDataDirectory(worker: String)
    /// The store could not be opened or read when durable machines were first placed here.
    case storeUnusable(worker: String, String)
    /// The store could not give the journal of a `journal` instance coming back.
    case journalUnreadable(worker: String, address: String, String)
    /// The store refused a commit.
    case storeWriteFailed(worker: String, String)
    /// The store refused the commit that quarantines the event at `address`, which crashed
    /// the worker twice (``WorkerCore/failed(_:)``).
    case quarantineUnwritten(worker: String, address: String, String)
    /// The audit log could not be opened.
    case auditLogUnusable(worker: String, String)
    /// The audit log refused a line.
    case auditWriteFailed(worker: String, String)

    var status: WorkerExitStatus {
        switch self {
        case .rejected, .superseded, .noDataDirectory, .storeUnusable, .auditLogUnusable: .configuration
        case .journalUnreadable, .storeWriteFailed, .quarantineUnwritten, .auditWriteFailed: .storage
        }
    }

    /// What the worker logs as it ends: what happened and what to do.
    var message: String {
        switch self {
        case .rejected(let why), .superseded(let why):
            why
        case .noDataDirectory(let worker):
            "topology places durable machines on worker \(worker), but it was started without a data directory; start it with --data-dir"
        case .storeUnusable(let worker, let why):
            "worker \(worker) cannot use its store: \(why)"
        case .journalUnreadable(let worker, let address, let why):
            "worker \(worker) cannot read the journal of \(address) from its store: \(why)"
        case .storeWriteFailed(let worker, let why):
            "worker \(worker) could not write to its store: \(why)"
        case .quarantineUnwritten(let worker, let address, let why):
            "worker \(worker) could not quarantine the event that crashed it twice at \(address): \(why); it ends before running "
                + "anything, so the event is not run again. Its next process quarantines the event from the crash count in the store "
                + "before it brings \(address) back; if this repeats, the store needs attention"
        case .auditLogUnusable(let worker, let why):
            "worker \(worker) cannot keep its audit log: \(why)"
        case .auditWriteFailed(let worker, let why):
            "worker \(worker) could not write its audit log: \(why)"
        }
    }
}
