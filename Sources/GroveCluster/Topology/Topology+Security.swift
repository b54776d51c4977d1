extension Topology {
    /// Who may connect, and what each client key may do. Every endpoint of a topology with a
    /// ``coordinatorKey`` speaks CURVE; an ipc endpoint without one admits only processes of the
    /// launching user (checked on each connection from the peer's credentials).
    public struct Security: Sendable, Equatable {
        /// `true` lets tcp endpoints run without CURVE: anyone who can reach them is trusted.
        /// `fsm-launch` warns on every start. Defaults to `false`.
        public var insecure: Bool
        /// The coordinator's secret key file (`NAME.key_secret`, mode 0600, from `fsm-keys new`).
        /// Required when an endpoint is tcp, unless ``insecure``.
        public var coordinatorKey: String?
        /// The client keys the coordinator accepts, with what each may do.
        public var clients: [ClientGrant]

        /// - Parameters:
        ///   - insecure: Whether tcp endpoints may run without CURVE.
        ///   - coordinatorKey: The coordinator's secret key file.
        ///   - clients: The client keys accepted and their roles.
        public init(insecure: Bool = false, coordinatorKey: String? = nil, clients: [ClientGrant] = []) {
            self.insecure = insecure
            self.coordinatorKey = coordinatorKey
            self.clients = clients
        }

        /// Whether the endpoints speak CURVE.
        public var usesCurve: Bool { coordinatorKey != nil }
    }

    /// What a client may ask for. Roles do not include one another: list each one a key needs.
    public enum Role: String, Sendable, Hashable, CaseIterable, Comparable {
        /// `get`, `list`, and watching the events endpoint.
        case read
        /// Events (and the raw `echo` baseline).
        case send
        /// `stop` and `cancel`.
        case admin

        public static func < (lhs: Role, rhs: Role) -> Bool {
            allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
        }
    }

    /// One client key and its roles.
    public struct ClientGrant: Sendable, Equatable {
        /// The client's public key file (`NAME.key`).
        public var key: String
        /// What the key may do.
        public var roles: Set<Role>
        /// Machine name patterns the roles are limited to (`*` matches any run of characters, so
        /// `"poller*"` covers `poller/eu`); empty means every machine. A limited key cannot watch:
        /// the events endpoint cannot filter what one subscriber receives.
        public var machines: [String]

        /// - Parameters:
        ///   - key: The client's public key file.
        ///   - roles: What the key may do.
        ///   - machines: Patterns of the machine names the roles cover; empty for all.
        public init(key: String, roles: Set<Role>, machines: [String] = []) {
            self.key = key
            self.roles = roles
            self.machines = machines
        }

        /// Whether the grant covers `address` (`name` or `name/key`).
        public func covers(address: String) -> Bool {
            guard !machines.isEmpty else { return true }
            return machines.contains { Self.matches(pattern: Array($0.utf8), Array(address.utf8)[...]) }
        }

        /// Glob match with `*` only.
        static func matches(pattern: [UInt8], _ text: ArraySlice<UInt8>) -> Bool {
            guard let star = pattern.firstIndex(of: UInt8(ascii: "*")) else { return Array(text) == pattern }
            let head = pattern[..<star]
            guard text.starts(with: head) else { return false }
            let tail = Array(pattern[(star + 1)...])
            var rest = text.dropFirst(head.count)
            while true {
                if matches(pattern: tail, rest) { return true }
                guard !rest.isEmpty else { return false }
                rest = rest.dropFirst()
            }
        }
    }

    /// The endpoints that are tcp: they cross hosts, so without CURVE anyone who can reach them
    /// is trusted.
    public var tcpEndpoints: [String] {
        [coordinator.clients, coordinator.workers, coordinator.events].filter { $0.hasPrefix("tcp://") }
    }
}
