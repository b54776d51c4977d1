import GroveWire

extension CoordinatorCore {
    /// A worker says a machine ended (`machine`): published on `machine:<address>`, and when the
    /// topology removes the ended instances of its machine (`onEnd: "remove"`), the instance is
    /// no longer listed. The worker dropped it; the key's next event starts a new instance,
    /// listed again when it goes out (its address is no longer resolved as listed).
    mutating func ended(_ message: WireMessage) -> [CoordinatorAction] {
        let address = message.address
        let parts = address.split(separator: "/", maxSplits: 1)
        if parts.count == 2, let spec = topology.machine(named: String(parts[0])), spec.keyed, spec.onEnd == .remove {
            forgetInstance(address)
        }
        return [.publish(topic: "machine:" + address, message)]
    }

    /// Takes a keyed instance out of the listing, out of the resolved addresses, and out of
    /// the states a `snapshot` answers with (a removed instance has none).
    mutating func forgetInstance(_ address: String) {
        let parts = address.split(separator: "/", maxSplits: 1)
        guard parts.count == 2 else { return }
        keyedInstances[String(parts[0])]?.remove(address)
        resolved[address] = nil
        publications.forgetStates(of: [address])
    }
}
