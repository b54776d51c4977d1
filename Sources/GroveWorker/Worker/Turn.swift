/// What one turn of a worker's loop holds back until it ends, in one place: the messages its
/// machines send (``OutboundCollector``: replies, state changes, outputs), the hosts it woke
/// (``DrainQueue``), the durable instances that changed or ended (``DurableWrites``), the audit
/// lines of its transitions (``AuditSink``) and the instances that ended (``EndedInstances``).
///
/// A turn is a batch from the coordinator, or a host woken alone (a timer, an effect's result).
/// It begins with ``begin(collectingWoken:)`` and ends in ``WorkerRuntime/endTurn()``, which
/// keeps the worker's promises in this order: the woken hosts drain; the instances that ended
/// are settled (a removed instance's key is free before its last reply arrives); the durable
/// instances are committed, then the audit lines written (what is acknowledged is in the store
/// and the log, or the worker exits first); then the messages leave, as one.
///
/// The runtime owns it and gives it to each host it makes (``HostWiring``); the hosts note into
/// it from the worker's loop thread, and what they note outside a turn (a host drained alone, a
/// timer) starts one of its own. Its messages are the link's: ``outbound`` is the
/// ``WorkerLink``'s collector.
final class Turn: Sendable {
    let outbound: OutboundCollector
    let woken = DrainQueue()
    let durable = DurableWrites()
    let audit = AuditSink()
    let ended = EndedInstances()
    /// The direct endpoint's replies, held as ``outbound``'s are (docs/DIRECT-ROUTES.md, 2.2).
    let direct: DirectRoute?

    init(outbound: OutboundCollector, direct: DirectRoute? = nil) {
        self.outbound = outbound
        self.direct = direct
    }

    /// From now until the turn ends, messages, durable changes and (for a batch, whose hosts
    /// drain after it is queued: `collectingWoken`) wake-ups are held.
    func begin(collectingWoken: Bool) {
        outbound.begin()
        direct?.begin()
        if collectingWoken { woken.beginCollecting() }
        durable.beginCollecting()
    }
}
