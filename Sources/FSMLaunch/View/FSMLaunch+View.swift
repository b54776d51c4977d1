import Foundation
import GroveCluster
import GroveCoordinator
import GroveView
import Logging
import ZeroMQ

extension FSMLaunch {
    /// The live view the topology asks for (`view.listen`), or `nil`. With CURVE, the view
    /// speaks to the coordinator with a key pair of its own, admitted as a client with every
    /// role (it checks each viewer's roles itself, and the coordinator checks them again), and
    /// trusts the tokens the topology's client keys make (`fsm-send view`, ``KeyToken``).
    func makeView(_ topology: Topology, coordinator: Coordinator, log: Logger) throws -> LiveView? {
        guard let listen = topology.view.hostAndPort else { return nil }
        var credentials: Credentials?
        var trusted: [(publicKey: [UInt8], shared: [UInt8], viewer: ViewAccess.Viewer)] = []
        if let coordinatorKey = coordinator.publicKey {
            let keys = try ClusterKeys(topology: topology, relativeTo: topologyDirectory)
            guard let own = keys.coordinator else { return nil }
            let pair = try CurveKeyPair.generate()
            coordinator.admitClientKey(pair.publicKey, grants: [Topology.ClientGrant(key: "fsm-launch's live view", roles: Set(Topology.Role.allCases))])
            credentials = Credentials(keys: pair, coordinator: coordinatorKey)
            // A key listed twice has the grants of both entries, as on the clients endpoint.
            var grants: [CurveKey: (name: String, grants: [Topology.ClientGrant])] = [:]
            for (grant, key) in zip(topology.security.clients, keys.clients) {
                grants[key, default: (grant.key, [])].grants.append(grant)
            }
            for (key, entry) in grants {
                let shared = try KeyToken.sharedSecret(secretKey: own.secretKey.bytes, publicKey: key.bytes)
                trusted.append((key.bytes, shared, ViewAccess.Viewer(grants: entry.grants, name: entry.name)))
            }
        }
        var metricsSource: LiveView.MetricsSource?
        if topology.metrics.listen != nil {
            metricsSource = { [coordinator] done in coordinator.metricsText(done) }
        }
        let view = LiveView(topology: topology, host: listen.host, port: listen.port,
                            events: ClientEndpoint.connectable(coordinator.endpoints.events, via: coordinator.clientsConnectEndpoint),
                            clients: coordinator.clientsConnectEndpoint, credentials: credentials,
                            executableDirectory: Self.executableDirectory(), log: log,
                            metricsSource: metricsSource)
        for key in trusted { view.hub.trust(publicKey: key.publicKey, shared: key.shared, as: key.viewer) }
        return view
    }
}
