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
