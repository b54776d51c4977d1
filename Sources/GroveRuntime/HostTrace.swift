public import Grove

/// Where a processed event came from.
@usableFromInline package enum EventOrigin: Sendable, Equatable {
    /// `send` or `sendAndWait`.
    case sent
    /// Returned inline by a transition (`.events`).
    case inline
    /// Delivered by async work with this id.
    case effect(EffectID)
    /// A timer with this id fired.
    case timer(EffectID)
}

/// A record of what a host did, for the test store. Called on the host's actor, in order.
@usableFromInline package enum HostTrace<M: Machine>: Sendable {
    case processed(event: M.Event, origin: EventOrigin, state: M.State)
    case unhandled(event: M.Event, origin: EventOrigin)
    case output(M.Output)
    /// Work with this id finished on its own.
    case workEnded(EffectID)
}
