import GroveCluster
import GroveWire
import Synchronization

/// A worker's audit log and the lines waiting for it. Lines are collected while the worker's
/// loop handles a batch (or drains a host woken alone) and written once at the end of that
/// turn, after the store's commit and before the replies leave (``WorkerRuntime/commitTurn()``):
/// a durable machine's line is never written for a transition the store did not keep.
final class AuditSink: Sendable {
    private struct State {
        /// Where the log goes (the worker's `--audit-dir`).
        var directory: String?
        /// The audited machines' names, and whether lines carry states.
        var audited: Set<String> = []
        var states = false
        var log: AuditLog?
        var pending: [UInt8] = []
    }

    private let state = Mutex(State())
    /// Whether lines may be pending: a worker that audits nothing pays one relaxed load per turn.
    private let active = Atomic<Bool>(false)

    /// Sets the directory the log is opened in when a welcome first places an audited machine.
    func use(directory: String) {
        state.withLock { $0.directory = directory }
    }

    /// Adopts what a welcome says is audited, opening `<directory>/<worker>.jsonl` the first time
    /// something is. Instances made before keep what they were made with.
    /// - Throws: ``AuditLogError`` when the log cannot be opened, or no directory was given.
    func adopt(_ placement: AuditPlacement?, worker: String) throws(AuditLogError) {
        let opened: Result<Void, AuditLogError> = state.withLock { state in
            state.audited = Set(placement?.machines ?? [])
            state.states = placement?.states ?? false
            guard let placement, state.log == nil else { return .success(()) }
            guard let directory = state.directory else {
                return .failure(AuditLogError(.cannotOpen, path: "", "the topology audits \(placement.machines.joined(separator: ", ")) "
                                              + "on worker \(worker), but it was started without an audit directory; start it with --audit-dir"))
            }
            do throws(AuditLogError) {
                state.log = try AuditLog(directory: directory, worker: worker, sync: placement.flush == .disk)
                return .success(())
            } catch {
                return .failure(error)
            }
        }
        try opened.get()
        if placement != nil { active.store(true, ordering: .relaxed) }
    }

    /// Nil when the instance at `address` is not audited; else whether its lines carry states.
    func carriesStates(forAddress address: String) -> Bool? {
        // A worker that audits nothing makes its instances without a lock or a string here.
        guard active.load(ordering: .relaxed) else { return nil }
        let name = MachineAddress.machine(of: address)
        return state.withLock { $0.audited.contains(name) && $0.log != nil ? $0.states : nil }
    }

    /// Queues `line` for the next ``writePending()``.
    func append(_ line: AuditLine) {
        state.withLock { line.write(to: &$0.pending) }
    }

    /// Writes the lines queued since the last call, in the order they were committed.
    /// - Throws: ``AuditLogError`` when the file does not take them.
    func writePending() throws(AuditLogError) {
        guard active.load(ordering: .relaxed) else { return }
        let (lines, log) = state.withLock { (Swift.exchange(&$0.pending, with: []), $0.log) }
        guard !lines.isEmpty, let log else { return }
        try log.append(lines)
    }

    /// The open log's path, for diagnostics and tests.
    var path: String? { state.withLock { $0.log?.path } }
}
