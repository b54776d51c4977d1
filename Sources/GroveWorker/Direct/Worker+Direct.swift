import Foundation
import GroveCluster
import Logging
import ZeroMQ

/// Why a worker could not bind its direct endpoint (`--direct`).
struct DirectEndpointError: Error, CustomStringConvertible {
    let description: String
}

extension Worker {
    /// Binds the direct endpoint (docs/DIRECT-ROUTES.md, 1.2) in the worker's own context, as the
    /// coordinator binds its clients endpoint: the ZAP handler first (domain `grove.direct`: the
    /// topology's client keys, from the coordinator's `access`; over ipc without keys, peers of
    /// this process's uid), then a ROUTER with the clients endpoint's bounds, a CURVE server with
    /// the worker's own key pair when the topology speaks CURVE. Over ipc, the socket's directory
    /// is made private (0700) first, the path checked, and the files this instance's killed
    /// processes left swept (``DirectSocketFiles``).
    /// - Returns: The route (its endpoint as bound, a wildcard host replaced) and the ZAP socket.
    static func bindDirect(_ endpoint: String, context: ZMQContext, loop: IOLoop, worker: String, credentials: Credentials?,
                           log: Logger) throws -> (route: DirectRoute, zap: SocketID) {
        if case .socket(let path) = LocalEndpoint(endpoint) {
            do {
                try PrivateDirectory.prepare((path as NSString).deletingLastPathComponent)
                try LocalEndpoint.checkSocket(path)
            } catch {
                throw DirectEndpointError(description: "cannot use the direct endpoint \(endpoint): \(error)")
            }
            // Files an earlier process of this instance left when killed (SIGKILL skips the
            // unlink at stop); one something still listens on stays (a stopped predecessor's).
            for leftover in DirectSocketFiles.sweepLeftovers(beside: path, instance: worker) {
                log.info("removed the direct socket file \(leftover), left by an earlier process of worker \(worker) that nobody listens on")
            }
        }
        let zap = try Socket(context, .router)
        try zap.setLinger(milliseconds: 0)
        try zap.bind("inproc://zeromq.zap.01")
        let router = try Socket(context, .router)
        try router.setRouterMandatory(true)
        try router.setLinger(milliseconds: 0)
        // The coordinator's frame limit is in its welcome, after the bind: the default limit
        // here (plus CURVE's box), the welcome's sizes checked per request (``DirectCore``).
        try router.setMaxMessageSize(Int64(max(Topology.Limits().messageBytes + 33, 1024)))
        router.maximumFrames = 8
        try router.setSendHighWaterMark(1000)
        try router.setReceiveHighWaterMark(1000)
        router.heldBytes = HeldBytes(threshold: ClientRules.smallReply)
        try router.setZAPDomain(Gatekeeper.Endpoint.direct.rawValue)
        if let credentials { try router.becomeCurveServer(secretKey: credentials.keys.secretKey) }
        // Every request is judged by who sent it: a client key's grants, or a trusted peer.
        router.readsUserID = true
        do {
            try router.bind(endpoint)
        } catch {
            throw DirectEndpointError(description: "cannot bind the direct endpoint \(endpoint): \(error.message); "
                                      + (error.errno == EADDRINUSE ? "it is in use: choose another, or port 0" : "check --direct"))
        }
        let bound = ClientEndpoint.connectable(router.lastEndpoint, via: endpoint)
        let zapID = loop.add(zap)
        let routerID = loop.add(router)
        let route = DirectRoute(worker: worker, endpoint: bound, socket: routerID, loop: .io(loop), curve: credentials != nil, log: log)
        return (route, zapID)
    }
}
