/// The statuses a worker process ends with, as the BSD `sysexits` names them where one fits:
/// the one list that the worker's exits, the supervisor's default ``Topology/Supervision/finalExitCodes``,
/// `fsm-worker --help` and docs/ARCHITECTURE.md read.
public enum WorkerExitStatus: Int32, CaseIterable, Sendable {
    /// Stopped as asked: SIGTERM, SIGINT, or the launching process gone (`--exit-with-parent`).
    case stopped = 0
    /// The socket could not be set up, or a service beside the worker failed.
    case failed = 1
    /// A bad command line, as `swift-argument-parser` reports one.
    case commandLine = 2
    /// EX_USAGE: a bad command line, as a worker executable of your own may report one.
    case usage = 64
    /// EX_IOERR: the store or the audit log failed a read or a write. Nothing the worker
    /// acknowledged is lost (it ends before those replies leave); restarted, it continues from
    /// what the store holds.
    case storage = 74
    /// EX_CONFIG: the coordinator rejected this process (its name, key, machines or
    /// incarnation), or the topology asks for what it was not started with (a data directory
    /// for durable machines, an audit log it can keep). Only a change of topology or worker can
    /// help, so it is not restarted.
    case configuration = 78

    /// Whether a supervisor leaves a worker down after it (the default of
    /// ``Topology/Supervision/finalExitCodes``): a restart would end the same way.
    public var isFinal: Bool {
        switch self {
        case .commandLine, .usage, .configuration: true
        case .stopped, .failed, .storage: false
        }
    }

    /// The statuses after which a supervisor does not restart a worker, by default.
    public static var final: [Int32] { allCases.filter(\.isFinal).map(\.rawValue) }

    /// One line for people: what the status means.
    public var summary: String {
        switch self {
        case .stopped: "stopped as asked (SIGTERM, SIGINT, the launcher gone)"
        case .failed: "the socket could not be set up"
        case .commandLine: "a bad command line (final)"
        case .usage: "a bad command line, as your own worker may say it (final)"
        case .storage: "the store or the audit log failed; restarted, it goes on from the store"
        case .configuration: "rejected by the coordinator, or the topology needs what it lacks (final)"
        }
    }

    /// Every status and its ``summary``, one per line, for `--help`.
    public static var help: String {
        "Exit statuses (final: not restarted by default):\n" + allCases.map { "  \($0.rawValue)  \($0.summary)" }.joined(separator: "\n")
    }
}

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
    /// The audit log could not be opened.
    case auditLogUnusable(worker: String, String)
    /// The audit log refused a line.
    case auditWriteFailed(worker: String, String)

    var status: WorkerExitStatus {
        switch self {
        case .rejected, .superseded, .noDataDirectory, .storeUnusable, .auditLogUnusable: .configuration
        case .journalUnreadable, .storeWriteFailed, .auditWriteFailed: .storage
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
        case .auditLogUnusable(let worker, let why):
            "worker \(worker) cannot keep its audit log: \(why)"
        case .auditWriteFailed(let worker, let why):
            "worker \(worker) could not write its audit log: \(why)"
        }
    }
}
