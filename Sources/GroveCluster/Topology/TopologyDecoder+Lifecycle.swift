import GroveWire

extension TopologyDecoder {
    /// `machines[].onEnd`: `stay` when absent. `remove` frees a key, so it needs a keyed machine.
    /// - Parameter keyed: The machine's `keyed`, or nil when that was refused (then `remove` is
    ///   not judged: one problem at a time).
    mutating func decodeEndPolicy(in members: [String: JSONValue], at path: JSONPath, keyed: Bool?) -> EndPolicy? {
        let field = Field("onEnd", "\"restart\"", "what becomes of an instance that ends or fails")
        let policy = optionalChoice(
            field, in: members, at: path, default: EndPolicy.stay,
            meanings: [
                "stay": "it stays ended until an admin restarts it",
                "restart": "it starts again from its initial state, with backoff",
                "remove": "keyed machines: the instance is dropped and its key is free",
            ]
        )
        guard policy == .remove, keyed == false else { return policy }
        report(.invalidValue, path.appending(field.key), "onEnd \"remove\" frees an instance's key, and this machine is not keyed "
            + "(it has one instance, which would never come back); use \"restart\" to start it again, or set \"keyed\": true")
        return nil
    }
}
