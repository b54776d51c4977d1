import GroveWire

extension TopologyDecoder {
    /// What `machines[].passivateAfterMs` decoded to: `after` nil when absent (never passivate).
    struct Passivation {
        var after: Int?
    }

    /// `machines[].passivateAfterMs`: how long an idle instance of a keyed machine stays in its
    /// worker's memory. Only keyed machines passivate: a single machine is one instance, started
    /// with the topology, which nothing would bring back but its next event.
    /// - Parameter keyed: The machine's `keyed`, or nil when that was refused (then not judged
    ///   together: one problem at a time).
    /// - Returns: nil after reporting a problem.
    mutating func decodePassivation(in members: [String: JSONValue], at path: JSONPath, keyed: Bool?) -> Passivation? {
        guard members["passivateAfterMs"] != nil else { return Passivation(after: nil) }
        let field = Field("passivateAfterMs", "60000",
                          "the milliseconds an idle keyed instance stays in memory before it is written to the store and leaves")
        guard let after = optionalCount(field, in: members, at: path, default: 0, minimum: 1) else { return nil }
        guard after <= Self.longestWaitMs else {
            report(.invalidValue, path.appending(field.key),
                   "passivateAfterMs must be at most \(Self.longestWaitMs) (about 11.5 days), found \(after); remove it to never passivate")
            return nil
        }
        guard keyed != false else {
            report(.invalidValue, path.appending(field.key), "passivateAfterMs lets idle instances of a keyed machine leave memory, "
                + "and this machine is not keyed (its one instance stays); set \"keyed\": true, or remove passivateAfterMs")
            return nil
        }
        return Passivation(after: after)
    }
}
