package import Foundation
package import GroveCluster
package import ZeroMQ

/// The keys a topology's `security` names, read from their files: what the coordinator needs
/// to speak CURVE and to know its peers.
package struct ClusterKeys: Sendable {
    /// The coordinator's own pair; `nil` without CURVE.
    package var coordinator: CurveKeyPair?
    /// Each worker group's public key, for the groups that name one.
    package var workers: [String: CurveKey] = [:]
    /// Each client grant's public key, in the order of `security.clients`.
    package var clients: [CurveKey] = []

    /// Reads every key file `topology` names; relative paths are taken from `directory` (the
    /// topology file's folder), or the working directory.
    /// - Throws: ``CoordinatorError`` naming the JSON path and the file.
    package init(topology: Topology, relativeTo directory: URL?) throws(CoordinatorError) {
        func path(_ file: String) -> String {
            guard !file.hasPrefix("/"), let directory else { return file }
            return directory.appending(path: file).path
        }
        let security = topology.security
        guard let coordinatorFile = security.coordinatorKey else { return }
        guard curveIsAvailable else {
            throw CoordinatorError("$.security.coordinatorKey: this libzmq was built without CURVE; install Debian's libzmq5 (built with libsodium) or remove the keys")
        }
        do {
            coordinator = try KeyFile.keyPair(at: path(coordinatorFile))
        } catch {
            throw CoordinatorError("$.security.coordinatorKey: \(error)")
        }
        for (index, group) in topology.workers.enumerated() {
            guard let file = group.key else { continue }
            do {
                workers[group.name] = try KeyFile.publicKey(at: path(file))
            } catch {
                throw CoordinatorError("$.workers[\(index)].key: \(error)")
            }
        }
        for (index, grant) in security.clients.enumerated() {
            do {
                clients.append(try KeyFile.publicKey(at: path(grant.key)))
            } catch {
                throw CoordinatorError("$.security.clients[\(index)].key: \(error)")
            }
        }
    }
}
