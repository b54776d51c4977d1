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
            case (.exact, _), (.tcp, _):
                return false
            }
        }
    }

    /// The longest `ipc://` path a Unix socket address holds (`sun_path` less its terminator).
    private static let maximumIPCPath = 107

    /// `coordinator`: the three endpoints. The section, and each of its keys, may be left out:
    /// an endpoint left out is a socket in the topology's private directory,
    /// `<runtime directory>/<name>/<key>` (``RuntimeDirectory``). An abstract socket
    /// (`ipc://@…`) is refused unless the topology speaks CURVE (`security.coordinatorKey`).
    /// - Parameters:
    ///   - root: The document's members.
    ///   - name: The topology's name, `nil` when it is unusable (reported already).
    mutating func decodeEndpoints(in root: [String: JSONValue], name: String?) -> Topology.Endpoints? {
        let path = JSONPath.root.appending("coordinator")
        var members: [String: JSONValue] = [:]
        if let value = root["coordinator"] {
            guard let found = self.members(
                of: value, at: path, known: TopologyKeys.coordinator,
                what: "an object with the endpoints clients, workers and events (each may be left out)"
            ) else { return nil }
            members = found
        }
        let curve = if case .object(let security)? = root["security"] { security["coordinatorKey"] != nil } else { false }
        let leftOut = TopologyKeys.coordinator.filter { members[$0] == nil }
        var directory: String?
        if let name, let first = leftOut.first {
            if let reason = RuntimeDirectory.unusableName(name) {
                report(.invalidValue, JSONPath.root.appending("name"), "'\(name)' cannot name the directory of the topology's sockets "
                    + "(\(reason)), which coordinator.\(first) left out needs; rename the topology, or write coordinator.\(first)")
            } else {
                directory = runtimeDirectory + "/" + name
            }
        }

        var endpoints: [String] = []
        var bindings: [(path: JSONPath, binding: Binding)] = []
        for (key, meaning) in [
            ("clients", "the endpoint clients send events to"),
            ("workers", "the endpoint worker processes connect to"),
            ("events", "the endpoint state changes are published on"),
        ] {
            let keyPath = path.appending(key)
            let example = "\"ipc:///run/grove/\(key)\""
            var endpoint: String?
            var binding: Binding?
            if members[key] != nil {
                endpoint = requiredText(Field(key, example, meaning), in: members, at: path)
                if let endpoint { binding = checkEndpoint(endpoint, at: keyPath, example: example, curve: curve) }
            } else if let directory {
                endpoint = privateEndpoint(key, in: directory, at: keyPath)
                binding = endpoint.map { .exact($0) }
            }
            guard let endpoint, let binding else { continue }
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

    /// The endpoint `key` of a topology that leaves it out: the socket `key` in `directory`, the
    /// topology's private one; `nil` after reporting why there is none.
    private mutating func privateEndpoint(_ key: String, in directory: String, at path: JSONPath) -> String? {
        let socket = directory + "/" + key
        guard socket.utf8.count <= Self.maximumIPCPath else {
            report(.invalidEndpoint, path, "left out, it would be the socket \(socket), \(socket.utf8.count) bytes, and a Unix socket's "
                + "path holds at most \(Self.maximumIPCPath); set \(RuntimeDirectory.variable) to a shorter directory, shorten the "
                + "topology's name, or write coordinator.\(key)")
            return nil
        }
        return "ipc://" + socket
    }

    /// What `endpoint` binds, or `nil` after reporting why ZeroMQ (or Grove) would refuse it.
    private mutating func checkEndpoint(_ endpoint: String, at path: JSONPath, example: String, curve: Bool) -> Binding? {
        if let address = endpoint.dropping(prefix: "ipc://") {
            guard !address.isEmpty else {
                report(.invalidEndpoint, path, "'\(endpoint)' has no path; write e.g. \(example), or leave \(path.lastKey) out for a socket "
                    + "in the topology's private directory")
                return nil
            }
            guard address.utf8.count <= Self.maximumIPCPath else {
                report(.invalidEndpoint, path, "the ipc path is \(address.utf8.count) bytes; Unix sockets allow at most \(Self.maximumIPCPath), so use a shorter path")
                return nil
            }
            if address.hasPrefix("@"), !curve {
                report(.insecure, path, "'\(endpoint)' is a Linux abstract socket, which has no owner and no permissions: any local user "
                    + "could bind it first and answer in the coordinator's place, password requests included. Leave \(path.lastKey) out "
                    + "for a socket in the topology's private directory (\(runtimeDirectory)/<name>/\(path.lastKey)), write a socket "
                    + "file in a directory only you can write, e.g. \(example), or add security.coordinatorKey so that CURVE proves "
                    + "the coordinator")
                return nil
            }
            return .exact(endpoint)
        }
        if endpoint.hasPrefix("inproc://") {
            // The coordinator's ZeroMQ context is its own: only sockets of that context reach an
            // inproc endpoint, and workers, fsm-send and clients are other processes.
            report(.invalidEndpoint, path, "'\(endpoint)' could only be reached from inside the coordinator, and workers and clients "
                + "run in other processes; use ipc:// (e.g. \(example)), tcp://, or leave \(path.lastKey) out")
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
        report(.invalidEndpoint, path, "'\(endpoint)' has no supported scheme; start it with ipc:// or tcp://, e.g. \(example), "
            + "or leave \(path.lastKey) out")
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
