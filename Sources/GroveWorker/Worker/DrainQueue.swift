import Grove
import GroveCluster
import GroveRuntime
import Synchronization

/// Drains the machine hosts a received batch touched, after the whole batch is queued: instead of
/// one task (and one thread hand-off) per woken host, the worker's loop visits each host once, in
/// plain calls (the hosts share its executor), and every reply the batch produced leaves in one
/// message.
///
/// Hosts woken outside a batch (an effect's result, a timer) are drained in a turn of their own
/// (``onWokenAlone(_:)``).
final class DrainQueue: Sendable {
    private let state = Mutex<(collecting: Bool, targets: [DrainTarget])>((false, []))
    /// How a host woken outside a batch is drained: by the worker's runtime, which writes its
    /// durable machines before their replies leave. Without one, in a task of its own.
    private let alone = CallbackSlot<DrainTarget>()

    /// Hosts woken outside a batch are handed to `drain` from now on.
    func onWokenAlone(_ drain: @escaping @Sendable (DrainTarget) -> Void) {
        alone.set(drain)
    }

    /// Called by a host's mailbox when it goes from idle to having work.
    func schedule(_ target: DrainTarget) {
        let deferred = state.withLock { state in
            if state.collecting { state.targets.append(target) }
            return state.collecting
        }
        guard !deferred else { return }
        if let drain = alone.current {
            drain(target)
        } else {
            Task { await target.drain() }
        }
    }

    /// From now on, wake-ups are collected for ``drainCollected()``.
    func beginCollecting() {
        state.withLock { $0.collecting = true }
    }

    /// Drains every host woken since ``beginCollecting()``, in the order they were woken, and
    /// tells `drained` of each that had a host to drain. Hosts share the caller's executor:
    /// they drain in plain calls.
    func drainCollected(_ drained: (DrainTarget) -> Void) {
        let targets = state.withLock { state in
            state.collecting = false
            return Swift.exchange(&state.targets, with: [])
        }
        for target in targets where target.drainHere() { drained(target) }
    }
}

/// How to drain one host.
class DrainTarget: @unchecked Sendable {
    /// The address of the instance whose host it drains: what the worker's runtime, which
    /// drains it, tells after a drain (``WorkerRuntime/drained(_:)``), instead of a closure
    /// per instance holding the instance weakly (a weak reference moves every retain and
    /// release of the instance to a slower side table).
    let address: String

    init(address: String) {
        self.address = address
    }

    func drain() async {}
    /// Drains a host whose executor is the caller's, synchronously; false when it has none
    /// any more (``HostDrain/detach()``).
    @discardableResult
    func drainHere() -> Bool { false }
}

/// Drains a `MachineHost<M>` through its type's specialized ``HostedPath``.
///
/// Holds the host strongly, so the host needs no weak references (which would move every
/// retain and release of it to a slower side table). The cycle this makes (host → mailbox →
/// wake-up → target → host) is broken by ``detach()`` when the host's ``Hosted`` goes away.
final class HostDrain<M: Machine>: DrainTarget, @unchecked Sendable {
    let path: HostedPath<M>
    private let host = Mutex<MachineHost<M>?>(nil)

    init(address: String, path: HostedPath<M>) {
        self.path = path
        super.init(address: address)
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

    /// Drains the host in a task: only where no worker's runtime drains it (before its start,
    /// or a host made outside one), so no instance is told of it.
    override func drain() async {
        guard let host = host.withLock({ $0 }) else { return }
        await path.drain(host)
    }

    override func drainHere() -> Bool {
        guard let host = host.withLock({ $0 }) else { return false }
        path.drainHere(host)
        return true
    }
}
