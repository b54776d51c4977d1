public import Grove

/// A connection that buffers what is sent until it is online, in `gen_statem`'s words: sends
/// while not online are postponed and go out in the order they came once the link is up;
/// connecting gives up after 5 s (a state timeout), waits a second and tries again, three
/// times, then goes offline. The timeouts are armed on entering their states (enter actions),
/// whatever transition led there.
///
/// ```
/// offline --connect--> connecting --linkUp--> online --linkDown--> connecting
/// connecting --(5 s)--> backingOff --(1 s)--> connecting ... (the third time) --> offline
/// ```
public enum BufferedConnection: StateScoped {
    public enum State: Codable, Sendable, Equatable {
        case offline
        /// Dialling, the `attempt`th time since the last `connect` or link loss.
        case connecting(attempt: Int)
        /// Waiting before the next attempt.
        case backingOff(attempt: Int)
        /// Connected: what was sent, in order.
        case online(sent: [String])
    }

    public enum Event: Codable, Sendable, Equatable {
        case connect
        /// The transport reports the link up (or down).
        case linkUp
        case linkDown
        case send(String)
        /// The state timeouts' events.
        case dialTimedOut
        case retry
    }

    /// How many times it dials before it goes offline.
    public static let attempts = 3
    public static let dialTimeout: Duration = .seconds(5)
    public static let backoff: Duration = .seconds(1)

    public static var initialState: State { .offline }

    public static func update(_ state: inout State, event: Event) -> Effect {
        switch (state, event) {
        case (.offline, .connect):
            state = .connecting(attempt: 1)
            return .none
        case (.connecting, .linkUp):
            state = .online(sent: [])
            return .none
        case (.connecting(let attempt), .dialTimedOut):
            state = attempt < attempts ? .backingOff(attempt: attempt) : .offline
            return .none
        case (.backingOff(let attempt), .retry):
            state = .connecting(attempt: attempt + 1)
            return .none
        case (.online(let sent), .send(let text)):
            state = .online(sent: sent + [text])
            return .none
        case (.online, .linkDown):
            state = .connecting(attempt: 1)
            return .none
        case (.offline, .send), (.connecting, .send), (.backingOff, .send):
            // Kept until the state changes, then delivered again: online, it goes out.
            return .postpone
        case (.offline, .linkUp), (.offline, .linkDown), (.offline, .dialTimedOut), (.offline, .retry),
             (.connecting, .connect), (.connecting, .linkDown), (.connecting, .retry),
             (.backingOff, .connect), (.backingOff, .linkUp), (.backingOff, .linkDown), (.backingOff, .dialTimedOut),
             (.online, .connect), (.online, .linkUp), (.online, .dialTimedOut), (.online, .retry):
            return .unhandled
        }
    }

    /// Each state that waits arms its timeout on entry, so every way into it arms it.
    public static func enter(_ state: State) -> Effect {
        switch state {
        case .connecting: .stateTimeout(after: dialTimeout, send: .dialTimedOut)
        case .backingOff: .stateTimeout(after: backoff, send: .retry)
        case .offline, .online: .none
        }
    }
}
