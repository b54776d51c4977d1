import Foundation
import GroveCluster
import GroveCoordinator
import GroveView
import ZeroMQ

extension FSMLaunch {
    /// With `metrics.requireToken`, the coordinator serves a scrape only with a token one of
    /// the topology's client keys made for the metrics (`fsm-send metrics-token`, ``KeyToken``)
    /// whose grants read every machine (``ScrapeAccess``): checked as the live view checks its
    /// key tokens, from the Curve25519 secret the key shares with the coordinator's.
    func requireScrapeTokens(_ topology: Topology, coordinator: Coordinator) throws {
        guard topology.metrics.listen != nil, topology.metrics.requireToken else { return }
        let keys = try ClusterKeys(topology: topology, relativeTo: topologyDirectory)
        guard let own = keys.coordinator else { return }
        var access = ScrapeAccess()
        // A key listed twice has the grants of both entries, as on the clients endpoint.
        var grants: [CurveKey: (name: String, grants: [Topology.ClientGrant])] = [:]
        for (grant, key) in zip(topology.security.clients, keys.clients) {
            grants[key, default: (grant.key, [])].grants.append(grant)
        }
        for (key, entry) in grants {
            let shared = try KeyToken.sharedSecret(secretKey: own.secretKey.bytes, publicKey: key.bytes)
            access.trust(publicKey: key.bytes, shared: shared, name: entry.name, grants: entry.grants)
        }
        let checked = access
        coordinator.requireScrapeTokens { authorization in
            switch checked.decide(authorization: authorization, nowSeconds: Int64(Date().timeIntervalSince1970)) {
            case .allowed: nil
            case .unauthenticated(let why): .unauthenticated(why)
            case .forbidden(let why): .forbidden(why)
            }
        }
    }
}
