package import Foundation
package import GroveCluster

extension Coordinator {
    /// The most bytes of a socket path (`sun_path` less its terminator).
    static let maximumSocketPath = LocalEndpoint.maximumSocketPath

    /// Makes ready the topology's ipc endpoints before they are bound, or refuses them: the
    /// private runtime directory and the topology's directory in it are created (mode 0700) or
    /// checked; every socket path must be one only this user (or root) could have made; a
    /// socket another process still listens on is not taken over; an abstract socket is refused
    /// unless CURVE proves the coordinator.
    /// - Parameters:
    ///   - topology: The topology about to be run.
    ///   - environment: Where the runtime directory is read from.
    ///   - uid: The launching user.
    ///   - creating: `false` to create nothing and look only at what is there (`fsm-launch
    ///     --check`): a directory still missing, and a live socket, are no problem then.
    /// - Throws: ``CoordinatorError`` naming the endpoint, what is wrong and what to do.
    package static func prepareLocalEndpoints(of topology: Topology, environment: [String: String] = ProcessInfo.processInfo.environment,
                                              uid: uid_t = geteuid(), creating: Bool = true) throws(CoordinatorError) {
        let runtime = RuntimeDirectory.path(environment: environment, uid: uid)
        let own = RuntimeDirectory.directory(ofTopology: topology.name, environment: environment, uid: uid)
        for (role, endpoint) in [("clients", topology.coordinator.clients), ("workers", topology.coordinator.workers),
                                 ("events", topology.coordinator.events)] {
            let failing = "cannot bind the \(role) endpoint \(endpoint)"
            switch LocalEndpoint(endpoint) {
            case .other:
                continue
            case .abstract:
                guard !topology.security.usesCurve else { continue }
                throw CoordinatorError("\(failing): an abstract socket has no owner and no permissions, so any local user could bind "
                    + "it first and answer in the coordinator's place; leave coordinator.\(role) out of the topology (a socket in "
                    + "\(own) is used), or add security.coordinatorKey so that CURVE proves the coordinator")
            case .socket(let path):
                guard path.utf8.count <= maximumSocketPath else {
                    throw CoordinatorError("\(failing): its path is \(path.utf8.count) bytes and a Unix socket's holds at most "
                        + "\(maximumSocketPath); use a shorter path" + (path.hasPrefix(own + "/") ? " (set \(RuntimeDirectory.variable))" : ""))
                }
                let isOwn = (path as NSString).deletingLastPathComponent == own
                let instead = isOwn
                    ? "or set \(RuntimeDirectory.variable) to a directory of yours"
                    : "or change coordinator.\(role) to a path in a directory only you can write"
                do {
                    if isOwn, creating {
                        try PrivateDirectory.prepare(runtime, uid: uid)
                        try PrivateDirectory.prepare(own, uid: uid)
                    } else if isOwn {
                        try PrivateDirectory.check(runtime, uid: uid)
                        try PrivateDirectory.check(own, uid: uid)
                        guard (try? PathFacts.of(own)) != nil else { continue }
                    }
                    try LocalEndpoint.checkSocket(path, uid: uid)
                } catch {
                    throw CoordinatorError("\(failing): \(error); \(instead)")
                }
                if creating, LocalEndpoint.isListening(path) {
                    throw CoordinatorError("\(failing): a process is listening on it already: is another fsm-launch running this "
                        + "topology? Stop it, \(instead)")
                }
            }
        }
    }
}
