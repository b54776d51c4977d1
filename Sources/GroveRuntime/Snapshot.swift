public import Grove
public import Logging

/// A machine instance at rest: its state, its pending timers (with absolute deadlines) and the
/// events waiting in its mailbox. Codable when the machine's state and events are.
///
/// Timers are recorded unless they are a step of a sequence (the steps after them are closures);
/// a timer inside a merge restores as a top-level timer. Tasks, streams and io requests in flight
/// are not recorded (their closures cannot be encoded), so a machine that must survive a restart
/// keeps what it is waiting for in its state.
public struct Snapshot<M: Machine>: Sendable {
    /// A timer that had not fired when the snapshot was taken.
    public struct PendingTimer: Sendable {
        public var id: EffectID
        public var deadline: Timestamp
        public var event: M.Event
    }

    public var state: M.State
    public var timers: [PendingTimer]
    public var queuedEvents: [M.Event]
}

extension Snapshot: Codable where M.State: Codable, M.Event: Codable {}
extension Snapshot.PendingTimer: Codable where M.Event: Codable {}

extension MachineHost {
    /// The machine at rest, between two events.
    public func snapshot() -> Snapshot<M> {
        Snapshot(
            state: _state,
            timers: registry.pendingTimers.map { .init(id: $0.id, deadline: $0.deadline, event: $0.event) }
                + timersToRestore,
            queuedEvents: mailbox.queuedEvents()
        )
    }

    /// Creates a host that continues from `snapshot`: same state, the same timers firing at their
    /// original deadlines (at once when already past), queued events first in the mailbox.
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
}
