import Grove
import GroveRuntime
import Synchronization

/// Drains the machine hosts a received batch touched, after the whole batch is queued: instead of
/// one task (and one thread hand-off) per woken host, the worker's loop visits each host once, in
/// plain calls (the hosts share its executor), and every reply the batch produced leaves in one
/// message.
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
    /// Hosts share the caller's executor: they drain in plain calls.
    func drainCollected() {
        let targets = state.withLock { state in
            state.collecting = false
            return Swift.exchange(&state.targets, with: [])
        }
        for target in targets { target.drainHere() }
    }
}

/// How to drain one host.
class DrainTarget: @unchecked Sendable {
    func drain() async {}
    /// Drains a host whose executor is the caller's, synchronously.
    func drainHere() {}
}

/// Drains a `MachineHost<M>` through its type's specialized ``HostedPath``.
///
/// Holds the host strongly, so the host needs no weak references (which would move every
/// retain and release of it to a slower side table). The cycle this makes (host → mailbox →
/// wake-up → target → host) is broken by ``detach()`` when the host's ``Hosted`` goes away.
final class HostDrain<M: Machine>: DrainTarget, @unchecked Sendable {
    let path: HostedPath<M>
    private let host = Mutex<MachineHost<M>?>(nil)

    init(path: HostedPath<M>) {
        self.path = path
    }

    /// Set once, right after the host is created and before it starts.
    func attach(_ host: MachineHost<M>) {
        self.host.withLock { $0 = host }
    }

    /// Lets the host go; drains scheduled later do nothing.
    func detach() {
        // Released after the lock: the host's deinit answers what it still had queued.
        let released = host.withLock { Swift.exchange(&$0, with: nil) }
        _ = released
    }

    override func drain() async {
        guard let host = host.withLock({ $0 }) else { return }
        await path.drain(host)
    }

    override func drainHere() {
        guard let host = host.withLock({ $0 }) else { return }
        path.drainHere(host)
    }
}
