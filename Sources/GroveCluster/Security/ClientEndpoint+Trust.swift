public import Foundation
public import GroveWire

extension ClientEndpoint {
    /// Refuses an endpoint at which this process cannot tell the coordinator from another
    /// local user standing in for it; clients, watchers and workers ask before every connect.
    ///
    /// - With CURVE (`curve`), the coordinator's public key proves whom the connection reached:
    ///   every endpoint passes.
    /// - `ipc://@NAME`, a Linux abstract socket, has no owner: anyone on the host may bind it
    ///   first. Refused.
    /// - `ipc://PATH` passes when only this user or root could have made the socket there:
    ///   see ``LocalEndpoint/checkSocket(_:uid:)``. ZeroMQ connects again on its own after the
    ///   coordinator restarts; since nobody else may create a file in that directory, what it
    ///   reaches then is this user's too.
    /// - tcp passes: a topology runs tcp without CURVE only when it says `"insecure": true`.
    ///
    /// ```swift
    /// try ClientEndpoint.verify("ipc://@grove-default/clients", curve: false)   // throws untrusted-endpoint
    /// ```
    /// - Parameters:
    ///   - endpoint: The endpoint about to be connected to.
    ///   - curve: Whether the connection uses CURVE with the coordinator's public key.
    ///   - uid: The user the socket must belong to; the process's effective uid.
    /// - Throws: ``WireError`` `untrusted-endpoint` saying what is wrong and what to do;
    ///   `unreachable` when a directory on the way to the socket does not exist (no coordinator
    ///   has made it: nothing is connected to, since whoever made it later would be reached);
    ///   `invalid-endpoint` when the socket's path is too long to be one.
    public static func verify(_ endpoint: String, curve: Bool, uid: uid_t = geteuid()) throws(WireError) {
        guard !curve else { return }
        switch LocalEndpoint(endpoint) {
        case .other:
            return
        case .abstract:
            throw WireError(.untrustedEndpoint, """
                refusing \(endpoint): an abstract socket has no owner, so any local user could have bound it to stand in \
                for the coordinator. Connect to the socket file its topology binds (fsm-launch's ready line prints it), \
                or give CURVE keys (--key-file and --coordinator-key) to prove the coordinator
                """)
        case .socket(let path):
            guard path.utf8.count <= LocalEndpoint.maximumSocketPath else {
                throw WireError(.invalidEndpoint, "\(endpoint): the socket's path has \(path.utf8.count) bytes and a Unix socket's path "
                    + "holds at most \(LocalEndpoint.maximumSocketPath); use a shorter path"
                    + (path.hasPrefix(RuntimeDirectory.path() + "/") ? " (set \(RuntimeDirectory.variable) to a shorter directory)" : ""))
            }
            do throws(PrivateDirectory.Refusal) {
                try LocalEndpoint.checkSocket(path, uid: uid)
            } catch where error.problem == .missing {
                // Nothing there: no coordinator, and nobody to stand in for one either. Not
                // connected to at all: ZeroMQ would keep trying, and reach whoever made it later.
                throw WireError(.unreachable, "no coordinator at \(endpoint): \(error.path) does not exist. Is fsm-launch running this "
                    + "topology, as this user and with the same \(RuntimeDirectory.variable) (or XDG_RUNTIME_DIR)? Its ready line "
                    + "prints the endpoint to use")
            } catch {
                throw WireError(.untrustedEndpoint, "refusing \(endpoint), which may not be your coordinator's: \(error)")
            }
        }
    }
}
