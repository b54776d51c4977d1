import GroveCluster
import GroveWire

/// Keyed instances bounded per machine (`limits.instancesPerMachine`): the coordinator is where
/// every event that starts one passes, and it lists them all, so it refuses the one past the
/// bound there, before its worker spends anything on it. Existing keys keep working; a removed
/// instance (`onEnd: "remove"`, or its worker lost) frees its place.
extension CoordinatorCore {

    /// Lists `address`, which an event is about to start, as an instance of its keyed machine;
    /// or, when that machine has `limits.instancesPerMachine` instances already and this is a
    /// new one, the `busy` that refuses the event. Single machines are not counted.
    mutating func admitInstance(_ address: String) -> WireError? {
        // The name alone: the key is not made a string of its own.
        guard MachineAddress.hasKey(address) else { return nil }
        let name = MachineAddress.machine(of: address)
        let limit = topology.limits.instancesPerMachine
        if let listed = keyedInstances[name], listed.count >= limit, !listed.contains(address) {
            return WireError(.busy,
                "machine '\(name)' has \(listed.count) keyed instances, its limit (limits.instancesPerMachine in the topology): "
                    + "an event for a new key is refused until one is removed (onEnd \"remove\" removes an instance that ends). "
                    + "Existing keys keep working; retry later, or raise the limit",
                address: address)
        }
        keyedInstances.insert(address, of: name)
        return nil
    }
}
