import GroveWire

extension TopologyDecoder {
    mutating func decodeRoutes(
        in root: [String: JSONValue], machines: KnownNames, keyed: [String: Bool]
    ) -> [Topology.Route] {
        let element = "{ \"from\": \"auth\", \"when\": \"signedIn\", \"to\": \"loader\", \"event\": \"load\" }"
        let field = Field("routes", "[\(element)]", "the outputs forwarded as events")
        var routes: [Topology.Route] = []
        for (path, value) in elements(field, in: root, at: .root, required: false) {
            guard let members = members(
                of: value, at: path, known: TopologyKeys.route, what: "a route like \(element)"
            ) else { continue }
            let from = requiredText(
                Field("from", "\"auth\"", "the name of the machine whose outputs the route watches"),
                in: members, at: path
            )
            if let from {
                checkSource(from, at: path.appending("from"), machines: machines)
            }
            var when: String?
            var whenIsValid = true
            if let value = members["when"] {
                when = text(value, Field("when", "\"signedIn\"", "the output case that triggers the route"), at: path.appending("when"))
                whenIsValid = when != nil
            }
            let to = requiredText(
                Field("to", "\"loader\"", "the receiving address, \"name\" or \"name/key\""), in: members, at: path
            )
            if let to {
                checkTarget(to, at: path.appending("to"), machines: machines, keyed: keyed)
                checkNFC(to, at: path.appending("to"), kind: "address")
            }
            var event: JSONValue?
            var eventIsValid = true
            if let value = members["event"] {
                event = value
                eventIsValid = checkEvent(value, at: path.appending("event"))
            }
            guard let from, whenIsValid, let to, eventIsValid else { continue }
            routes.append(Topology.Route(from: from, when: when, to: to, event: event))
        }
        return routes
    }

    private mutating func checkSource(_ from: String, at path: JSONPath, machines: KnownNames) {
        // Bytes, as every reading of an address (`MachineAddress`): a `/` before a combining
        // mark still ends the machine's name.
        let address = MachineAddress(from)
        if address.key != nil, machines.contains(address.machine) {
            report(.invalidValue, path, "'from' takes a machine name, not an address: a route watches every instance, so write '\(address.machine)'")
            return
        }
        resolve(from, at: path, in: machines, kind: "machine", section: "$.machines")
    }

    private mutating func checkTarget(_ to: String, at path: JSONPath, machines: KnownNames, keyed: [String: Bool]) {
        let route = Topology.Route(from: "", to: to)
        let name = route.targetMachine
        guard !name.isEmpty else {
            report(.invalidValue, path, "the address '\(to)' has no machine name; write \"name\" or \"name/key\"")
            return
        }
        guard resolve(name, at: path, in: machines, kind: "machine", section: "$.machines"),
              let isKeyed = keyed[name]
        else { return }
        switch (isKeyed, route.targetKey) {
        case (true, nil):
            report(.invalidValue, path, "'\(name)' is keyed; address one instance, e.g. '\(name)/<key>'")
        case (true, let key?) where key.isEmpty:
            report(.invalidValue, path, "the key after '\(name)/' is empty; write e.g. '\(name)/<key>'")
        case (false, _?):
            report(.invalidValue, path, "'\(name)' is not keyed; address it as '\(name)', without a key")
        default:
            break
        }
    }

    /// `false` after reporting an event no machine could decode.
    private mutating func checkEvent(_ event: JSONValue, at path: JSONPath) -> Bool {
        switch event {
        case .null:
            report(.invalidValue, path, "event is null; remove 'event' to forward the output itself, or give the event, e.g. \"load\"")
            return false
        case .string(let name) where name.isEmpty:
            report(.invalidValue, path, "event is empty; give the event's case name, e.g. \"load\", or remove 'event' to forward the output itself")
            return false
        case .string, .bool, .number, .integer, .array, .object:
            return true
        }
    }
}
