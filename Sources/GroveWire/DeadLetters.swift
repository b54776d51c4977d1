/// `dead-letters`: what an admin asks of one worker's quarantined events. The message's address
/// is the worker's name.
///
/// ```json
/// {"action": "list"}
/// {"action": "drop", "id": 3}
/// {"action": "retry", "id": 3}
/// ```
package struct DeadLetterRequest: Codable, Sendable, Hashable {
    package enum Action: String, Codable, Sendable, Hashable {
        /// Answered with a ``DeadLetterList``.
        case list
        /// Deletes the dead letter; answered `accepted`.
        case drop
        /// Deletes the dead letter and delivers its event once more to its machine; answered as
        /// that event is (`state`, or an error).
        case retry
    }

    package var action: Action
    /// The dead letter's id on its worker; for `drop` and `retry`.
    package var id: Int64?

    package init(_ action: Action, id: Int64? = nil) {
        self.action = action
        self.id = id
    }
}

/// `dead-letter-list`: one worker's quarantined events, oldest first.
package struct DeadLetterList: Codable, Sendable, Hashable {
    package struct Letter: Codable, Sendable, Hashable {
        /// Unique on its worker; `<worker>:<id>` names it across the topology.
        package var id: Int64
        package var address: String
        /// The machine's type in the topology.
        package var type: String
        /// The event as JSON, as its machine's Codable Event writes it.
        package var event: JSONValue
        /// What happened, for people.
        package var error: String
        /// How many times the worker died running it.
        package var crashes: Int
        /// When it was quarantined, in milliseconds since 1970.
        package var time: Int64

        package init(id: Int64, address: String, type: String, event: JSONValue, error: String, crashes: Int, time: Int64) {
            self.id = id
            self.address = address
            self.type = type
            self.event = event
            self.error = error
            self.crashes = crashes
            self.time = time
        }
    }

    package var worker: String
    package var deadLetters: [Letter]

    package init(worker: String, deadLetters: [Letter]) {
        self.worker = worker
        self.deadLetters = deadLetters
    }
}
