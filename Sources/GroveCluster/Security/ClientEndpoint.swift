import Foundation
package import GroveWire
package import ZeroMQ

/// Endpoints as a client should connect to them.
public enum ClientEndpoint {
    /// The endpoint forms a client can connect to, for error messages.
    public static let validForms = "ipc://PATH (a socket file) or tcp://HOST:PORT"

    /// `endpoint` as a peer that reaches the coordinator at `clients` should connect to it.
    ///
    /// A coordinator reports the endpoints it bound; a wildcard host (`tcp://*:5557`,
    /// `tcp://0.0.0.0:5557`, `tcp://[::]:5557`) means every interface, which no peer can connect
    /// to. It becomes the host of `clients` when that is `tcp://HOST:PORT`, so a watcher on
    /// another host connects to the coordinator's machine, else `127.0.0.1` (a client that
    /// reached the coordinator over `ipc://` is on its host). Other endpoints are returned as is.
    ///
    /// ```swift
    /// ClientEndpoint.connectable("tcp://0.0.0.0:5557", via: "tcp://grove-1:5555")   // "tcp://grove-1:5557"
    /// ClientEndpoint.connectable("ipc:///run/user/1000/grove/default/events", via: "tcp://grove-1:5555")   // unchanged
    /// ```
    /// - Parameters:
    ///   - endpoint: An endpoint from a listing, e.g. its `events`.
    ///   - clients: The clients endpoint the listing came from.
    public static func connectable(_ endpoint: String, via clients: String) -> String {
        guard let (host, port) = tcpHostAndPort(endpoint), isWildcard(host) else { return endpoint }
        let clientsHost = tcpHostAndPort(clients)?.host
        let replacement = clientsHost.flatMap { isWildcard($0) ? nil : $0 } ?? "127.0.0.1"
        return "tcp://\(replacement):\(port)"
    }

    /// Host and port of `tcp://[SOURCE;]HOST:PORT`, or `nil` for anything else.
    static func tcpHostAndPort(_ endpoint: String) -> (host: String, port: Substring)? {
        guard endpoint.hasPrefix("tcp://") else { return nil }
        let target = endpoint.dropFirst("tcp://".count).split(separator: ";").last ?? ""
        guard let colon = target.lastIndex(of: ":") else { return nil }
        return (String(target[..<colon]), target[target.index(after: colon)...])
    }

    static func isWildcard(_ host: String) -> Bool {
        ["*", "0.0.0.0", "[::]", "::", "[*]"].contains(host)
    }

    /// The error for a failed `zmq_connect`: ZeroMQ refusing the endpoint itself is bad input
    /// (``WireError/Code/invalidEndpoint``); anything else, `unreachable`.
    package static func connectError(_ error: ZMQError, endpoint: String, doing what: String) -> WireError {
        if error.errno == EPROTONOSUPPORT || error.errno == EINVAL {
            return WireError(.invalidEndpoint,
                "ZeroMQ refuses the endpoint '\(endpoint)' (\(String(cString: strerror(error.errno)))); "
                    + "write it as \(validForms)")
        }
        return WireError(.unreachable, "cannot \(what) \(endpoint): \(error)")
    }
}
