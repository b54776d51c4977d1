import GroveCluster
import GroveWire

/// Keyed instances bounded per machine (`limits.instancesPerMachine`): the coordinator is where
/// every event that starts one passes, and it lists them all, so it refuses the one past the
/// bound there, before its worker spends anything on it. Existing keys keep working; a removed
/// instance (`onEnd: "remove"`, or its worker lost) frees its place.
extension CoordinatorCore {

    /// What ``admitInstance(_:)`` did with the address an event is about to start.
    enum InstanceAdmission {
        /// Not a keyed instance (single machines are not counted), or one listed before.
        case known
        /// A keyed instance this very event lists: its key's first event.
        case listedNow
        /// A new keyed instance past `limits.instancesPerMachine`: the `busy` that refuses it.
        case refused(WireError)
    }

    /// Lists `address`, which an event is about to start, as an instance of its keyed machine;
    /// or, when that machine has `limits.instancesPerMachine` instances already and this is a
    /// new one, the `busy` that refuses the event. Single machines are not counted.
    mutating func admitInstance(_ address: String) -> InstanceAdmission {
        // The name alone: the key is not made a string of its own.
        guard MachineAddress.hasKey(address) else { return .known }
        let name = MachineAddress.machine(of: address)
        let limit = topology.limits.instancesPerMachine
        switch keyedInstances.admit(address, of: name, limit: limit) {
        case .added:
            return .listedNow
        case .present:
            return .known
        case .full:
            let count = keyedInstances[name]?.count ?? 0
            return .refused(WireError(.busy,
                "machine '\(name)' has \(count) keyed instances, its limit (limits.instancesPerMachine in the topology): "
                    + "an event for a new key is refused until one is removed (onEnd \"remove\" removes an instance that ends). "
                    + "Existing keys keep working; retry later, or raise the limit",
                address: address))
        }
    }
}
