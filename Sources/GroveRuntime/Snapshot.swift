public import Grove
public import Logging

/// A machine instance at rest: its state, its pending timers (with absolute deadlines), the io
/// it has in flight and the events waiting in its mailbox. Codable when the machine's state and
/// events are.
///
/// Timers restore at their original deadlines. An io request in flight restores as its request
/// type declares (``IORequest/onInterruption``): by default as the event its machine hears for
/// an ``IOFailure/Code/interrupted`` failure (the request may or may not have run); a
/// ``IOInterruption/reissue`` request is sent again under its id (``reissuedIO``), when the host
/// kept what started it (``HostOptions/reissuesIO``). A timer or io request inside an anonymous
/// merge restores as a top-level one. Work whose closures
/// cannot be encoded (tasks, streams), and timers and io that are sequence steps or inside a
/// named merge are not carried; they are listed in ``omittedEffects`` so the caller can decide
/// whether the snapshot is good enough. A machine that must survive a restart keeps what it is
/// waiting for in its state and restarts that work when restored.
public struct Snapshot<M: Machine>: Sendable {
    /// A timer that had not fired when the snapshot was taken.
    public struct PendingTimer: Sendable {
        /// The timer's effect id; generated ids get a fresh one on restore.
        public var id: EffectID
        /// When it fires, as an absolute time.
        public var deadline: Timestamp
        /// The event it sends.
        public var event: M.Event
    }

    /// An io request that was in flight when the snapshot was taken.
    public struct InterruptedIO: Sendable {
        /// The request's effect id.
        public var id: EffectID
        /// The event its machine hears once restored: the request's result mapping applied to an
        /// ``IOFailure/Code/interrupted`` failure.
        public var event: M.Event

        package init(id: EffectID, event: M.Event) {
            self.id = id
            self.event = event
        }
    }

    /// An io request in flight whose type re-issues it (``IOInterruption/reissue``). Its result
    /// mapping is code, which cannot be stored, so the snapshot keeps the transition that started
    /// it: the state before it and its event. `update` is pure, so running that transition again
    /// gives the same request with the same mapping; the host sends it again, under ``id``.
    public struct ReissuedIO: Sendable {
        /// The request's effect id; a generated one gets a fresh id on restore.
        public var id: EffectID
        /// The request's name (``IORequest/name``), to check the transition gives it again.
        public var name: String
        /// The state the transition that started the request began from.
        public var stateBefore: M.State
        /// The event of that transition.
        public var event: M.Event
        /// Which of the transition's re-issuable requests this is (0 for the first), counting
        /// top-level ones and those inside anonymous merges, in order.
        public var ordinal: Int
        /// What the machine hears when the transition no longer gives this request (its
        /// `update` changed since): the request's ``IOFailure/Code/interrupted`` failure.
        public var interrupted: M.Event
    }

    /// The machine's state.
    public var state: M.State
    /// Pending timers, earliest first.
    public var timers: [PendingTimer]
    /// io requests in flight, by effect id; each is delivered as its interrupted failure before
    /// the queued events.
    public var interruptedIO: [InterruptedIO] = []
    /// io requests in flight that are sent again once restored (``IOInterruption/reissue``).
    /// `nil` when there are none: a snapshot without them is coded as before this field existed.
    public var reissuedIO: [ReissuedIO]?
    /// External events accepted but not yet processed, oldest first.
    public var queuedEvents: [M.Event]
    /// Work that was in flight but is not in this snapshot.
    public var omittedEffects: [EffectID]
    /// Events the machine postponed (``MachineEffect/postpone``), oldest first, delivered again
    /// when its state's key next changes. `nil` when there are none: such a snapshot is coded as
    /// before this field existed, and a record from before decodes with none.
    public var postponed: [M.Event]? = nil
}

extension Snapshot {
    /// A snapshot of `state` alone: no timers, io in flight, queued events or omitted effects.
    package init(state: M.State) {
        self.init(state: state, timers: [], queuedEvents: [], omittedEffects: [])
    }
}

extension Snapshot: Codable where M.State: Codable, M.Event: Codable {}
extension Snapshot.PendingTimer: Codable where M.Event: Codable {}
extension Snapshot.InterruptedIO: Codable where M.Event: Codable {}
extension Snapshot.ReissuedIO: Codable where M.State: Codable, M.Event: Codable {}

extension MachineHost {
    /// The machine at rest, between two events.
    public func snapshot() -> Snapshot<M> {
        Snapshot(
            state: _state,
            timers: registry.pendingTimers.map { .init(id: $0.id, deadline: $0.deadline, event: $0.event) }
                + timersToRestore,
            interruptedIO: registry.interruptedIO.map { .init(id: $0.id, event: $0.event) },
            // A closure, not `\.record`: a key path in generic code is built at run time each call.
            reissuedIO: Self.nonEmpty(ioToReissue.map { $0.record } + registry.reissuedIO),
            queuedEvents: mailbox.queuedEvents(),
            omittedEffects: registry.unsnapshottable,
            postponed: postponed.isEmpty ? nil : postponed
        )
    }

    private static func nonEmpty(_ reissued: [Snapshot<M>.ReissuedIO]) -> [Snapshot<M>.ReissuedIO]? {
        reissued.isEmpty ? nil : reissued
    }

    /// Creates a host that continues from `snapshot`: same state, the same timers firing at their
    /// original deadlines (at once when already past), re-issued io sent again under its ids
    /// when the host first runs, interrupted io then queued events first in the mailbox.
    public init(
        restoring snapshot: Snapshot<M>,
        env: M.Env,
        io: IOHandlers = IOHandlers(),
        clock: any HostClock = WallClock(),
        options: HostOptions<M> = HostOptions(),
        logger: Logger? = nil
    ) {
        self.init(machine: M.self, env: env, initialState: snapshot.state, performer: io,
                  clock: clock, options: options, logger: logger, restoring: snapshot)
    }

    /// Creates a host that continues from `snapshot`, for a machine without an environment.
    public init(
        restoring snapshot: Snapshot<M>,
        io: IOHandlers = IOHandlers(),
        clock: any HostClock = WallClock(),
        options: HostOptions<M> = HostOptions(),
        logger: Logger? = nil
    ) where M.Env == Void {
        self.init(restoring: snapshot, env: (), io: io, clock: clock, options: options, logger: logger)
    }
}
