import GroveWire

extension TopologyDecoder {
    /// What an endpoint binds, to find two endpoints that cannot both be bound.
    private enum Binding {
        case exact(String)
        case tcp(host: String, port: Int)

        func clashes(with other: Binding) -> Bool {
            switch (self, other) {
            case (.exact(let a), .exact(let b)):
                return a == b
            case (.tcp(let hostA, let portA), .tcp(let hostB, let portB)):
                let wildcards: Set = ["*", "0.0.0.0", "[::]", "::"]
                return portA == portB && portA != 0 && (hostA == hostB || wildcards.contains(hostA) || wildcards.contains(hostB))
            default:
                return false
            }
        }
    }

    /// The longest `ipc://` path a Unix socket address holds (`sun_path` less its terminator).
    private static let maximumIPCPath = 107

    mutating func decodeEndpoints(in root: [String: JSONValue]) -> Topology.Endpoints? {
        let field = Field(
            "coordinator",
            "{ \"clients\": \"ipc://@grove/clients\", \"workers\": \"ipc://@grove/workers\", \"events\": \"ipc://@grove/events\" }",
            "the endpoints the coordinator binds"
        )
        let path = JSONPath.root.appending("coordinator")
        guard let value = root[field.key] else {
            reportMissing(field, path)
            return nil
        }
        guard let members = members(
            of: value, at: path, known: TopologyKeys.coordinator,
            what: "an object with the endpoints clients, workers and events"
        ) else { return nil }

        var endpoints: [String] = []
        var bindings: [(path: JSONPath, binding: Binding)] = []
        for (key, meaning) in [
            ("clients", "the endpoint clients send events to"),
            ("workers", "the endpoint worker processes connect to"),
            ("events", "the endpoint state changes are published on"),
        ] {
            let keyPath = path.appending(key)
            let example = "\"ipc://@grove/\(key)\""
            guard let endpoint = requiredText(Field(key, example, meaning), in: members, at: path),
                  let binding = checkEndpoint(endpoint, at: keyPath, example: example)
            else { continue }
            if let earlier = bindings.first(where: { $0.binding.clashes(with: binding) }) {
                report(.invalidEndpoint, keyPath, "'\(endpoint)' binds the same address as \(earlier.path); give each endpoint its own address")
                continue
            }
            endpoints.append(endpoint)
            bindings.append((keyPath, binding))
        }
        guard endpoints.count == 3 else { return nil }
        return Topology.Endpoints(clients: endpoints[0], workers: endpoints[1], events: endpoints[2])
    }

    /// What `endpoint` binds, or `nil` after reporting why ZeroMQ would refuse it.
    private mutating func checkEndpoint(_ endpoint: String, at path: JSONPath, example: String) -> Binding? {
        if let address = endpoint.dropping(prefix: "ipc://") {
            guard !address.isEmpty else {
                report(.invalidEndpoint, path, "'\(endpoint)' has no path; write e.g. \(example) (abstract, Linux) or \"ipc:///tmp/grove-\(path.lastKey)\"")
                return nil
            }
            guard address.utf8.count <= Self.maximumIPCPath else {
                report(.invalidEndpoint, path, "the ipc path is \(address.utf8.count) bytes; Unix sockets allow at most \(Self.maximumIPCPath), so use a shorter path")
                return nil
            }
            return .exact(endpoint)
        }
        if endpoint.hasPrefix("inproc://") {
            // The coordinator's ZeroMQ context is its own: only sockets of that context reach an
            // inproc endpoint, and workers, fsm-send and clients are other processes.
            report(.invalidEndpoint, path, "'\(endpoint)' could only be reached from inside the coordinator, and workers and clients "
                + "run in other processes; use ipc:// (e.g. \(example)) or tcp://")
            return nil
        }
        if let address = endpoint.dropping(prefix: "tcp://") {
            let colon = address.lastIndex(of: ":")
            let portText = colon.map { address[address.index(after: $0)...] } ?? ""
            // Port `*` (or 0) asks the system for a free port; each such endpoint gets its own.
            let port = portText == "*" ? 0 : Int(portText)
            guard let colon, colon != address.startIndex, let port, (0...65535).contains(port) else {
                report(.invalidEndpoint, path, "'\(endpoint)' needs a host and a port from 1 to 65535 (or * for a free one); "
                    + "write e.g. \"tcp://127.0.0.1:5555\", \"tcp://*:5555\" to listen on every interface, or \"tcp://127.0.0.1:*\"")
                return nil
            }
            return .tcp(host: String(address[..<colon]), port: port)
        }
        report(.invalidEndpoint, path, "'\(endpoint)' has no supported scheme; start it with ipc:// or tcp://, e.g. \(example)")
        return nil
    }
}

extension String {
    /// The rest of the string after `prefix`, or `nil` when it does not start with it.
    fileprivate func dropping(prefix: String) -> Substring? {
        hasPrefix(prefix) ? dropFirst(prefix.count) : nil
    }
}

extension JSONPath {
    /// The last key of the path, or `""`.
    fileprivate var lastKey: String {
        if case .key(let key)? = components.last { key } else { "" }
    }
}
