public import Grove

/// Where a processed event came from.
public enum EventOrigin: Sendable, Equatable, CustomStringConvertible {
    /// `send` or `sendAndWait`.
    case sent
    /// Returned inline by a transition (`.events`).
    case inline
    /// Delivered by async work with this id.
    case effect(EffectID)
    /// A timer with this id fired.
    case timer(EffectID)
}

extension EventOrigin {
    public var description: String {
        switch self {
        case .sent: "sent"
        case .inline: "inline"
        case .effect(let id): "effect \(id)"
        case .timer(let id): "timer \(id)"
        }
    }
}

/// A record of what a host did, delivered in order on the host's actor to `HostOptions.trace`.
/// Use it to log or inspect transitions; keep the handler fast, it runs on every event.
public enum HostTrace<M: Machine>: Sendable {
    /// `event` was handled and committed `state`.
    case processed(event: M.Event, origin: EventOrigin, state: M.State)
    /// `update` returned `.unhandled` for `event`; `state` is the state after that call, which a
    /// correct machine left untouched (the test store checks).
    case unhandled(event: M.Event, origin: EventOrigin, state: M.State)
    /// The machine emitted an output.
    case output(M.Output)
    /// Work with this id finished on its own.
    case workEnded(EffectID)
    /// Work with this id threw and the machine gave no ``Machine/failureEvent(_:)`` for it: the
    /// error was logged and the machine runs on.
    case workFailed(EffectID, error: any Error)
    /// An event from work that was cancelled or replaced arrived and was discarded unprocessed.
    case resultDiscarded(EffectID)
}
