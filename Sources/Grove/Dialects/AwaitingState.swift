/// What an ``AwaitingStateMachine`` remembers: the user's state, the event whose transition is
/// running, and the events waiting behind it. Codable when the user's state and events are,
/// as `{"state": …, "inTransition": …, "waiting": […], "started": n}` (`inTransition` absent
/// when none runs).
public struct AwaitingState<S: Sendable, E: Sendable>: Sendable {
    /// The user's state, as the last committed transition left it.
    public var current: S
    /// The event whose awaiting transition is running; `nil` when none is.
    public var inTransition: E?
    /// Events that arrived while a transition ran, oldest first.
    public var waiting: [E]
    /// How many awaiting transitions were started, re-runs after a restore included: names each
    /// run, so that the result of one a restart superseded is told apart.
    public var started: Int

    /// A machine at `current`, with nothing running or waiting.
    public init(_ current: S, inTransition: E? = nil, waiting: [E] = [], started: Int = 0) {
        self.current = current
        self.inTransition = inTransition
        self.waiting = waiting
        self.started = started
    }
}

extension AwaitingState: Equatable where S: Equatable, E: Equatable {}

extension AwaitingState: Codable where S: Codable, E: Codable {
    enum CodingKeys: String, CodingKey {
        case current = "state", inTransition, waiting, started
    }
}

extension AwaitingState: Redacting {
    /// Secrets of the user's state, and of the events in transition and waiting, when their
    /// types adopt ``Redacting``.
    public static var holdsSecrets: Bool { Redaction.applies(to: S.self) || Redaction.applies(to: E.self) }

    /// The user's state and the events redacted; the run count as it is.
    public var redacted: Self {
        AwaitingState(Redaction.redact(current), inTransition: inTransition.map(Redaction.redact),
                      waiting: waiting.map(Redaction.redact), started: started)
    }
}
