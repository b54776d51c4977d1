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

/// Drains one instance's host through its type's specialized ``HostedPath`` (its ``HostDrainer``).
///
/// Not generic: a worker makes one per fresh key and frees it when the instance leaves, and as
/// `HostDrain<M>` its init, attach, detach and deinit each looked up type metadata (the
/// optional host under its lock), 4 % of a worker spawning fresh keys. The host is held as an
/// actor and handed back to the type's drainer, which knows its type.
///
/// Holds the host strongly, so the host needs no weak references (which would move every
/// retain and release of it to a slower side table). The cycle this makes (host → mailbox →
/// wake-up → target → host) is broken by ``detach()`` when the host's ``Hosted`` goes away.
final class HostDrain: DrainTarget, @unchecked Sendable {
    let drainer: HostDrainer
    /// The turn's queue of woken hosts, which ``schedule()`` joins: kept here so that the
    /// host's ``HostOptions/drainScheduler`` captures this target alone, which Swift passes as
    /// the closure's context instead of boxing the captures per instance.
    private let woken: DrainQueue
    private let host = Mutex<(any Actor)?>(nil)

    init(address: String, drainer: HostDrainer, woken: DrainQueue) {
        self.drainer = drainer
        self.woken = woken
        super.init(address: address)
    }

    /// Set once, right after the host is created and before it starts: a `MachineHost` of
    /// the drainer's machine type.
    func attach(_ host: any Actor) {
        self.host.withLock { $0 = host }
    }

    /// Lets the host go; drains scheduled later do nothing.
    func detach() {
        // Released after the lock: the host's deinit answers what it still had queued.
        let released = host.withLock { Swift.exchange(&$0, with: nil) }
        _ = released
    }

    /// Its host went from idle to having work: the turn drains it.
    func schedule() {
        woken.schedule(self)
    }

    /// Drains the host in a task: only where no worker's runtime drains it (before its start,
    /// or a host made outside one), so no instance is told of it.
    override func drain() async {
        guard let host = host.withLock({ $0 }) else { return }
        await drainer.drain(host)
    }

    override func drainHere() -> Bool {
        guard let host = host.withLock({ $0 }) else { return false }
        drainer.drainHere(host)
        return true
    }
}

/// How a machine type's hosts are drained, with the host passed as an actor: one per
/// ``HostedPath``, whose inlinable init builds its closures where the type is known.
@usableFromInline
final class HostDrainer: Sendable {
    @usableFromInline let drain: @Sendable (any Actor) async -> Void
    @usableFromInline let drainHere: @Sendable (any Actor) -> Void

    @usableFromInline
    init(drain: @escaping @Sendable (any Actor) async -> Void, drainHere: @escaping @Sendable (any Actor) -> Void) {
        self.drain = drain
        self.drainHere = drainHere
    }
}
