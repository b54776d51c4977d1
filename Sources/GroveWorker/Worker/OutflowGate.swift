import Synchronization

/// Whether what a worker's machines send (replies, state changes, outputs, io calls and
/// results, `machine` ended) may leave for the coordinator: only in a session the coordinator
/// welcomed. ``WorkerCore`` decides when it opens and closes (``WorkerAction/openOutflow`` and
/// ``WorkerAction/closeOutflow``); the link reads it for every message, so a reply pays one
/// atomic load and no call into the core.
///
/// While it is closed the coordinator has given up on this worker's session (it fell silent, or
/// the coordinator said it no longer knows the worker): the requests those replies answer were
/// answered `worker-lost` or died with the coordinator, and the socket they would queue on is
/// about to be replaced. They are dropped at once and counted, instead of growing a queue the
/// next reconnection throws away.
final class OutflowGate: Sendable {
    private let isOpen = Atomic<Bool>(false)
    private let dropped = Atomic<Int>(0)

    /// Whether a message may leave now; counts it as dropped when not.
    @inline(__always)
    func passes() -> Bool {
        if isOpen.load(ordering: .relaxed) { return true }
        dropped.add(1, ordering: .relaxed)
        return false
    }

    /// Opens the gate.
    /// - Returns: How many messages were dropped since it last opened.
    func open() -> Int {
        isOpen.store(true, ordering: .relaxed)
        return dropped.exchange(0, ordering: .relaxed)
    }

    func close() {
        isOpen.store(false, ordering: .relaxed)
    }
}
