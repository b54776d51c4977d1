public import Grove
public import Logging

/// A machine instance at rest: its state, its pending timers (with absolute deadlines), the io
/// it has in flight and the events waiting in its mailbox. Codable when the machine's state and
/// events are.
///
/// Timers restore at their original deadlines. An io request in flight restores as the event
/// its machine hears for an ``IOFailure/Code/interrupted`` failure: the request cannot be
/// followed across processes (its result mapping is code), and may or may not have run. A timer
/// or io request inside an anonymous merge restores as a top-level one. Work whose closures
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
    }

    /// The machine's state.
    public var state: M.State
    /// Pending timers, earliest first.
    public var timers: [PendingTimer]
    /// io requests in flight, by effect id; each is delivered as its interrupted failure before
    /// the queued events.
    public var interruptedIO: [InterruptedIO] = []
    /// External events accepted but not yet processed, oldest first.
    public var queuedEvents: [M.Event]
    /// Work that was in flight but is not in this snapshot.
    public var omittedEffects: [EffectID]
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

extension MachineHost {
    /// The machine at rest, between two events.
    public func snapshot() -> Snapshot<M> {
        Snapshot(
            state: _state,
            timers: registry.pendingTimers.map { .init(id: $0.id, deadline: $0.deadline, event: $0.event) }
                + timersToRestore,
            interruptedIO: registry.interruptedIO.map { .init(id: $0.id, event: $0.event) },
            queuedEvents: mailbox.queuedEvents(),
            omittedEffects: registry.unsnapshottable
        )
    }

    /// Creates a host that continues from `snapshot`: same state, the same timers firing at their
    /// original deadlines (at once when already past), interrupted io then queued events first
    /// in the mailbox.
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
