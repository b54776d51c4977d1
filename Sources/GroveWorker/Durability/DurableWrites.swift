import GroveCluster
import Synchronization

/// The durable machines that changed since the worker last wrote to its store, and those that
/// ended. While the runtime handles a received batch they are collected and written once, before
/// the batch's replies leave (a group commit); a change outside a batch (a timer, an io result)
/// asks the runtime for a write of its own, one per loop turn however many change.
final class DurableWrites: Sendable {
    private struct Pending {
        var collecting = false
        var scheduled = false
        var changed: [any HostedMachine] = []
        var ended: [String] = []
    }

    private let pending = Mutex(Pending())
    /// Asks the runtime to write what is pending (set once, when the runtime starts).
    private let requestWrite = CallbackSlot<Void>()

    func onWriteNeeded(_ request: @escaping @Sendable () -> Void) {
        requestWrite.set { _ in request() }
    }

    /// `machine` changed; it calls this once until it is written (its own flag says so).
    func changed(_ machine: any HostedMachine) {
        if pending.withLock({ Self.add(&$0) { $0.changed.append(machine) } }) { requestWrite.current?(()) }
    }

    /// The machine at `address` ended (stopped, terminal, failed): its record goes.
    func ended(_ address: String) {
        if pending.withLock({ Self.add(&$0) { $0.ended.append(address) } }) { requestWrite.current?(()) }
    }

    /// Adds to `pending`; true when a write must be requested (outside a batch, none asked yet).
    private static func add(_ pending: inout Pending, _ change: (inout Pending) -> Void) -> Bool {
        change(&pending)
        guard !pending.collecting, !pending.scheduled else { return false }
        pending.scheduled = true
        return true
    }

    /// From now on, changes wait for ``take()`` at the end of the batch.
    func beginCollecting() {
        pending.withLock { $0.collecting = true }
    }

    /// What changed and what ended since the last take; stops collecting.
    func take() -> (changed: [any HostedMachine], ended: [String]) {
        pending.withLock { pending in
            pending.collecting = false
            pending.scheduled = false
            return (Swift.exchange(&pending.changed, with: []), Swift.exchange(&pending.ended, with: []))
        }
    }
}
