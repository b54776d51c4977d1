import Grove
import GroveRuntime
import Synchronization

/// Drains the machine hosts a received batch touched, in one task, after the whole batch is
/// queued: instead of one task (and one thread hand-off) per woken host, the worker's loop
/// visits each host once, and every reply the batch produced leaves in one message.
///
/// Hosts woken outside a batch (an effect's result, a timer) get their own task as usual.
final class DrainQueue: Sendable {
    private let state = Mutex<(collecting: Bool, targets: [DrainTarget])>((false, []))

    /// Called by a host's mailbox when it goes from idle to having work.
    func schedule(_ target: DrainTarget) {
        let deferred = state.withLock { state in
            if state.collecting { state.targets.append(target) }
            return state.collecting
        }
        if !deferred { Task { await target.drain() } }
    }

    /// From now on, wake-ups are collected for ``drainCollected()``.
    func beginCollecting() {
        state.withLock { $0.collecting = true }
    }

    /// Drains every host woken since ``beginCollecting()``, in the order they were woken.
    func drainCollected() async {
        let targets = state.withLock { state in
            state.collecting = false
            return Swift.exchange(&state.targets, with: [])
        }
        for target in targets { await target.drain() }
    }
}

/// How to drain one host.
class DrainTarget: @unchecked Sendable {
    func drain() async {}
}

/// Drains a `MachineHost<M>` through its type's specialized ``HostedPath``.
///
/// `host` is written once, right after the host is created and before it starts (so before
/// anything can wake it), and only read afterwards: hence `@unchecked Sendable`.
final class HostDrain<M: Machine>: DrainTarget, @unchecked Sendable {
    let path: HostedPath<M>
    weak var host: MachineHost<M>?

    init(path: HostedPath<M>) {
        self.path = path
    }

    override func drain() async {
        guard let host else { return }
        await path.drain(host)
    }
}
