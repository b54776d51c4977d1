/// `dead-letters`: what an admin asks of one worker's quarantined events. The message's address
/// is the worker's name.
///
/// ```json
/// {"action": "list"}
/// {"action": "drop", "id": 3}
/// {"action": "retry", "id": 3}
/// ```
public struct DeadLetterRequest: Codable, Sendable, Hashable {
    public enum Action: String, Codable, Sendable, Hashable {
        /// Answered with a ``DeadLetterList``.
        case list
        /// Deletes the dead letter; answered `accepted`.
        case drop
        /// Deletes the dead letter and delivers its event once more to its machine; answered as
        /// that event is (`state`, or an error).
        case retry
    }

    public var action: Action
    /// The dead letter's id on its worker; for `drop` and `retry`.
    public var id: Int64?

    public init(_ action: Action, id: Int64? = nil) {
        self.action = action
        self.id = id
    }
}

/// `dead-letter-list`: one worker's quarantined events, oldest first.
public struct DeadLetterList: Codable, Sendable, Hashable {
    public struct Letter: Codable, Sendable, Hashable {
        /// Unique on its worker; `<worker>:<id>` names it across the topology.
        public var id: Int64
        public var address: String
        /// The machine's type in the topology.
        public var type: String
        /// The event as JSON, as its machine's Codable Event writes it.
        public var event: JSONValue
        /// What happened, for people.
        public var error: String
        /// How many times the worker died running it.
        public var crashes: Int
        /// When it was quarantined, in milliseconds since 1970.
        public var time: Int64

        public init(id: Int64, address: String, type: String, event: JSONValue, error: String, crashes: Int, time: Int64) {
            self.id = id
            self.address = address
            self.type = type
            self.event = event
            self.error = error
            self.crashes = crashes
            self.time = time
        }
    }

    public var worker: String
    public var deadLetters: [Letter]

    public init(worker: String, deadLetters: [Letter]) {
        self.worker = worker
        self.deadLetters = deadLetters
    }
}
