import GroveWire

extension TopologyDecoder {
    /// `security`: CURVE keys, client roles, or the explicit `insecure`. A topology with a tcp
    /// endpoint and neither keys nor `insecure` is refused here, so `--check` says so too.
    mutating func decodeSecurity(in root: [String: JSONValue], endpoints: Topology.Endpoints?,
                                 workers: [Topology.WorkerGroup]) -> Topology.Security? {
        let path = JSONPath.root.appending("security")
        let defaults = Topology.Security()
        var security = defaults
        var valid = true
        if let value = root["security"] {
            guard let members = members(
                of: value, at: path, known: TopologyKeys.security,
                what: "an object like { \"coordinatorKey\": \"keys/coordinator.key_secret\", \"clients\": [...] }"
            ) else { return nil }
            let insecure = optionalFlag(
                Field("insecure", "true", "whether tcp endpoints may run without CURVE; anyone who reaches them is trusted"),
                in: members, at: path, default: false
            )
            let key = members["coordinatorKey"].flatMap {
                text($0, Field("coordinatorKey", "\"keys/coordinator.key_secret\"", "the coordinator's secret key file from fsm-keys new"),
                     at: path.appending("coordinatorKey"))
            }
            let clients = decodeClientGrants(in: members, at: path)
            // Reported already; what can be read is still checked below, so every problem shows at once.
            if insecure == nil || clients == nil || (members["coordinatorKey"] != nil && key == nil) { valid = false }
            security = Topology.Security(insecure: insecure ?? false, coordinatorKey: key, clients: clients ?? [])
            if !security.usesCurve, !security.clients.isEmpty {
                report(.invalidValue, path.appending("clients"), "client keys need CURVE; add \"coordinatorKey\": \"keys/coordinator.key_secret\" (make it with fsm-keys new coordinator)")
            }
            if security.usesCurve, security.insecure {
                report(.invalidValue, path.appending("insecure"), "a topology with a coordinatorKey is not insecure; remove \"insecure\"")
            }
        }
        if let endpoints {
            let topology = Topology(name: "", coordinator: endpoints, workers: [], machines: [])
            if !topology.tcpEndpoints.isEmpty, !security.usesCurve, !security.insecure {
                report(.insecure, path, """
                    tcp endpoints (\(topology.tcpEndpoints.joined(separator: ", "))) would accept anyone who can reach them; \
                    make keys with fsm-keys new coordinator and add "security": { "coordinatorKey": "coordinator.key_secret" }, \
                    or say "security": { "insecure": true } to run without authentication
                    """)
            }
        }
        for (index, group) in workers.enumerated() where !group.external && group.key != nil {
            report(.invalidValue, JSONPath.root.appending("workers").appending(index: index).appending("key"),
                   "fsm-launch makes a fresh key pair for every worker it starts, so only an external group names a key; remove \"key\", or mark the group \"external\": true")
        }
        if !security.usesCurve {
            for (index, group) in workers.enumerated() where group.key != nil {
                report(.invalidValue, JSONPath.root.appending("workers").appending(index: index).appending("key"),
                       "a worker key needs CURVE; add \"security\": { \"coordinatorKey\": \"keys/coordinator.key_secret\" }")
            }
        }
        if security.usesCurve {
            for (index, group) in workers.enumerated() where group.external && group.key == nil {
                report(.missingKey, JSONPath.root.appending("workers").appending(index: index).appending("key"),
                       "the external worker group '\(group.name)' needs the public key its workers hold: \"key\": \"keys/\(group.name).key\" (make it with fsm-keys new \(group.name) on the worker's host)")
            }
        }
        return valid ? security : nil
    }

    private mutating func decodeClientGrants(in members: [String: JSONValue], at path: JSONPath) -> [Topology.ClientGrant]? {
        let element = "{ \"key\": \"keys/ops.key\", \"roles\": [\"read\", \"send\"] }"
        var grants: [Topology.ClientGrant] = []
        var valid = true
        for (elementPath, value) in elements(Field("clients", "[\(element)]", "the client keys accepted and their roles"),
                                            in: members, at: path, required: false) {
            guard let grant = self.members(of: value, at: elementPath, known: TopologyKeys.clientGrant, what: "a client key like \(element)") else {
                valid = false
                continue
            }
            let key = requiredText(Field("key", "\"keys/ops.key\"", "the client's public key file"), in: grant, at: elementPath)
            let roles = decodeRoles(in: grant, at: elementPath)
            let machines = optionalTexts(Field("machines", "[\"auth\", \"poller*\"]", "machine name patterns the roles cover"),
                                         in: grant, at: elementPath)
            guard let key, let roles, let machines else {
                valid = false
                continue
            }
            for (index, pattern) in machines.enumerated() {
                let patternPath = elementPath.appending("machines").appending(index: index)
                if pattern.isEmpty {
                    // It would match only the empty address, which no machine has.
                    report(.invalidValue, patternPath, "an empty pattern covers no machine; remove it, or write \"*\" for every machine")
                    valid = false
                } else if !checkNFC(pattern, at: patternPath, kind: "pattern") {
                    valid = false
                }
            }
            grants.append(Topology.ClientGrant(key: key, roles: roles, machines: machines))
        }
        return valid ? grants : nil
    }

    /// `roles`: required, not empty, each one of read, send, admin.
    private mutating func decodeRoles(in grant: [String: JSONValue], at path: JSONPath) -> Set<Topology.Role>? {
        let field = Field("roles", "[\"read\", \"send\"]", "what the key may do: read, send, admin")
        guard grant[field.key] != nil else {
            reportMissing(field, path.appending(field.key))
            return nil
        }
        guard let names = optionalTexts(field, in: grant, at: path) else { return nil }
        guard !names.isEmpty else {
            report(.invalidValue, path.appending(field.key), "a client key with no roles can do nothing; list some, e.g. \"roles\": [\"read\"]")
            return nil
        }
        var roles: Set<Topology.Role> = []
        let known = Topology.Role.allCases.map(\.rawValue)
        for (index, name) in names.enumerated() {
            guard !names[..<index].contains(name) else {
                report(.invalidValue, path.appending(field.key).appending(index: index),
                       "role '\(name)' is listed twice; list each role once (did you mean another of \(known.joined(separator: ", "))?)")
                return nil
            }
            guard let role = Topology.Role(rawValue: name) else {
                let hint = Self.closest(to: name, among: known).map { "did you mean '\($0)'? " } ?? ""
                report(.invalidValue, path.appending(field.key).appending(index: index),
                       "unknown role '\(name)'; \(hint)roles are \(known.joined(separator: ", "))")
                return nil
            }
            roles.insert(role)
        }
        return roles
    }
}
