import GroveWire
import ZeroMQ

/// How the driver carries out the core's bounds on watchers (`CoordinatorCore+Subscriptions.swift`):
/// a key refused on the events endpoint, and every connection to it reset.
extension CoordinatorDriver {
    func resetWatchers(refusing key: String?) {
        if let key, let curve = CurveKey(z85: key) { gatekeeper.refuse(watcher: curve) }
        let reset = AcceptedConnections.shutDown(acceptedOn: core.eventsEndpoint)
        log.warning("reset \(reset) connection(s) to the events endpoint \(core.eventsEndpoint)")
        // What libzmq held for them goes back to malloc as they close (noteClosedSubscription).
    }

    /// An unsubscription without a `User-Id` is libzmq letting go of a prefix whose last
    /// connection closed: its trie nodes (about 46 bytes per byte of prefix) went back to malloc,
    /// and at the next tick, once a megabyte of them has, to the system.
    func noteClosedSubscription(_ frame: [UInt8], from userID: String?) {
        guard userID == nil, frame.first == 0 else { return }
        releasedBytes += 46 * frame.count
    }
}

extension CoordinatorDriver {
    /// A client message the core refuses for its size (`CoordinatorCore+Sizes.swift`) is freed
    /// at once; its pages go back to the system at the next tick, not kept by malloc.
    func noteRefusedSize(_ header: Header, address: [UInt8], payload: [UInt8]) {
        let limits = core.topology.limits
        if address.count > limits.addressBytes || (header.kind != .batch && payload.count > core.maxPayload) {
            releasedBytes += address.count + payload.count
        }
    }
}
