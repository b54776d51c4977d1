public import GroveWire

extension Topology {
    /// Turns outputs of one machine into events of another.
    ///
    /// ```json
    /// { "from": "auth", "when": "signedIn", "to": "loader", "event": "load" }
    /// ```
    public struct Route: Sendable, Equatable {
        /// The name of the machine whose outputs the route watches; all its instances when keyed.
        public var from: String
        /// The output case that triggers the route: the single key of an object output, or a
        /// string output. `nil` matches every output.
        public var when: String?
        /// The receiving address: `"name"` of a single machine or `"name/key"` of a keyed one.
        public var to: String
        /// The event to send. A string such as `"load"` is short for a case without payload.
        /// `nil` forwards the output itself as the event.
        public var event: JSONValue?

        /// - Parameters:
        ///   - from: The watched machine's name.
        ///   - when: The output case that triggers the route, or `nil` for every output.
        ///   - to: The receiving address.
        ///   - event: The event to send, or `nil` to forward the output.
        public init(from: String, when: String? = nil, to: String, event: JSONValue? = nil) {
            self.from = from
            self.when = when
            self.to = to
            self.event = event
        }

        /// The machine name part of ``to``.
        public var targetMachine: String {
            MachineAddress.machine(of: to)
        }

        /// The key part of ``to``, or `nil` when it addresses a single machine.
        public var targetKey: String? {
            MachineAddress(to).key
        }

        /// `true` when `output` of the ``from`` machine triggers the route.
        /// - Parameter output: The output as JSON, e.g. `"signedIn"` or `{"signedIn": {...}}`.
        public func matches(_ output: JSONValue) -> Bool {
            guard let when else { return true }
            return Route.caseName(of: output) == when
        }

        /// The event the route sends for `output`: ``event``, or the output itself.
        /// - Parameter output: The output that triggered the route.
        public func event(for output: JSONValue) -> JSONValue {
            event ?? output
        }

        /// The case name of an encoded enum value: a string, or the single key of an object.
        static func caseName(of value: JSONValue) -> String? {
            switch value {
            case .string(let name): name
            case .object(let members) where members.count == 1: members.keys.first
            case .object, .null, .bool, .number, .integer, .array: nil
            }
        }
    }
}
