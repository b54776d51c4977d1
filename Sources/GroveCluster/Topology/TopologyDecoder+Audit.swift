import GroveWire

extension TopologyDecoder {
    static let auditExample = #"{ "directory": "grove-audit/default", "states": false, "flush": "process" }"#

    /// `"audit"`: where and how workers log the transitions of machines with `"audit": true`;
    /// defaults when absent.
    mutating func decodeAuditSettings(in root: [String: JSONValue]) -> Topology.AuditSettings? {
        let defaults = Topology.AuditSettings()
        guard let value = root["audit"] else { return defaults }
        let path = JSONPath.root.appending("audit")
        guard let members = members(of: value, at: path, known: TopologyKeys.audit, what: "an object like \(Self.auditExample)") else {
            return nil
        }
        let directoryField = Field("directory", "\"grove-audit/default\"",
                                   "where each worker appends its <worker>.jsonl, relative to the topology file")
        let directory = members[directoryField.key].flatMap { text($0, directoryField, at: path.appending(directoryField.key)) }
        if members[directoryField.key] != nil, directory == nil { return nil }
        let states = optionalFlag(
            Field("states", "false", "whether each line also carries the state after the transition, redacted when it has secrets"),
            in: members, at: path, default: defaults.states
        )
        let flush = optionalChoice(
            Field("flush", "\"process\"", "when a written line counts as kept"), in: members, at: path, default: defaults.flush,
            meanings: ["process": "handed to the operating system: survives the worker being killed",
                       "disk": "synced to the disk: survives the host too"]
        )
        guard let states, let flush else { return nil }
        return Topology.AuditSettings(directory: directory, states: states, flush: flush)
    }
}
