import GroveCluster
import GroveWire

extension CoordinatorCore {
    /// A worker says a machine ended (`machine`): published on `machine:<address>`, and when the
    /// topology removes the ended instances of its machine (`onEnd: "remove"`), the instance is
    /// no longer listed. The worker dropped it; the key's next event starts a new instance,
    /// listed again when it goes out (its address is no longer resolved as listed).
    mutating func ended(_ message: WireMessage) -> [CoordinatorAction] {
        let address = message.address
        let parsed = MachineAddress(address)
        if parsed.isInstance, let spec = topology.machine(named: parsed.machine), spec.keyed, spec.onEnd == .remove {
            forgetInstance(address)
        }
        return [.publish(topic: "machine:" + address, message)]
    }

    /// Takes a keyed instance out of the listing, out of the resolved addresses, and out of
    /// the states a `snapshot` answers with (a removed instance has none).
    mutating func forgetInstance(_ address: String) {
        let parsed = MachineAddress(address)
        guard parsed.isInstance else { return }
        keyedInstances.remove(address, of: parsed.machine)
        resolved[address] = nil
        publications.forgetStates(of: [address])
    }
}
