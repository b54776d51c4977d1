import GroveCluster
@_spi(GroveInternal) import GroveWire

/// The stored instances a worker is bringing back, chunk by chunk, and how long a turn of its
/// loop may bring them back on demand. The clock comes in as an argument (`RecoveryTests`).
struct Recovery {
    /// Instances brought back per turn of the worker's loop, at most.
    static let chunk = 1000
    /// How long one turn of bringing instances back may take before the loop runs again. By
    /// count alone, a turn of 500 `journal` instances with 1,000 entries each to replay took
    /// 2 s, longer than a heartbeat timeout of 1.5 s: the worker was declared lost, killed and
    /// restarted into the same turn until its supervisor gave up.
    static let turn = Duration.milliseconds(20)
    var waiting: [String: MachineRecord] = [:]
    /// The addresses still to bring back, the next one last.
    var order: [String] = []
    var restored = 0
    var started: ContinuousClock.Instant?
    /// Instances brought back because a message asked for them before their turn.
    var onDemand = 0
    /// Turns that stopped bringing instances back on demand and left messages for the next.
    var turnsCut = 0
    /// When the current turn began, while instances wait to come back.
    private var turnBegan: ContinuousClock.Instant?
    /// When the current turn must stop bringing instances back on demand; nil while it has
    /// brought none. One batch of the coordinator's (thousands of events) can touch every
    /// instance still waiting: restored all in that turn, 500 instances with 1,000 journal
    /// entries each kept a worker from its heartbeats past the timeout.
    private var onDemandEnds: ContinuousClock.Instant?
    /// The chunk of ``step(now:turn:)`` under way: how many instances it brought back and when
    /// it ends; nil between chunks.
    var chunkUnderway: (restored: Int, ends: ContinuousClock.Instant)?

    /// A turn of the worker's loop begins (a batch, or parked messages) at `now`.
    mutating func beginTurn(now: ContinuousClock.Instant) {
        onDemandEnds = nil
        turnBegan = waiting.isEmpty ? nil : now
    }

    /// An instance came back at `now` because a message asked for it; the turn may do so
    /// for `turn` from its beginning.
    mutating func restoredOnDemand(now: ContinuousClock.Instant, turn: Duration) {
        onDemand += 1
        if onDemandEnds == nil { onDemandEnds = (turnBegan ?? now) + turn }
    }

    /// Whether the turn can run out of time at all: it brought an instance back on demand.
    var isTimed: Bool { onDemandEnds != nil }

    /// Whether this turn has spent its time bringing instances back on demand, at `now`: the
    /// messages left then wait for the next turn (``WorkerRuntime/parked``). Asked after every
    /// event, so `now` is read only once the turn brought one back (``isTimed``).
    func turnIsOver(now: @autoclosure () -> ContinuousClock.Instant) -> Bool {
        guard let onDemandEnds else { return false }
        return now() >= onDemandEnds
    }

    /// Whether a restored instance's first drain only boots it (its timers armed, nothing run,
    /// re-issued io sent again): so when its snapshot has no queued events, no interrupted io
    /// and no re-issued io (which, no longer derived, is interrupted io) to handle. Such a drain
    /// is not a change to write again: after recovering 100,000 instances that was one commit
    /// of them all.
    static func firstDrainOnlyBoots(queuedEvents: Int, interruptedIO: Int, reissuedIO: Int) -> Bool {
        queuedEvents == 0 && interruptedIO == 0 && reissuedIO == 0
    }

    /// Whether a chunk of bringing instances back goes on after `restored` of them: always for
    /// the first (a slow one must not stop recovery), never past ``chunk``, and otherwise until
    /// `ends`. The clock is read only after the first.
    static func chunkGoesOn(restored: Int, now: @autoclosure () -> ContinuousClock.Instant, ends: ContinuousClock.Instant) -> Bool {
        restored < chunk && (restored == 0 || now() < ends)
    }

    /// Lists the stored instances that come back on this worker (in ``waiting`` and ``order``):
    /// those of a machine `placed` here durably, of the type stored, keyed as
    /// their address is, and not `running` already. The others stay in the store, not started
    /// (a machine moved to another worker, made not durable, or given another type).
    /// - Returns: How many records stay in the store, not started.
    mutating func queue(_ records: [MachineRecord], placed: [String: Welcome.HostedMachine], running: (String) -> Bool) -> Int {
        var notPlaced = 0
        for record in records where !running(record.address) {
            guard let machine = placed[MachineAddress.machine(of: record.address)], (machine.durability ?? .none) != .none,
                  machine.type == record.type, machine.keyed == MachineAddress.hasKey(record.address) else {
                notPlaced += 1
                continue
            }
            waiting[record.address] = record
            order.append(record.address)
        }
        return notPlaced
    }
}
