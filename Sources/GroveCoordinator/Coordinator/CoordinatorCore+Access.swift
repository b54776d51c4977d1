import GroveCluster
import GroveWire

extension Topology.Role {
    /// The role a client request needs, from the table of message kinds
    /// (``MessageKind/authority``); `nil` for kinds clients may not send at all (refused as
    /// such by ``CoordinatorCore/decide(client:_:as:backlog:)``) and for batches, whose
    /// envelopes are checked one by one.
    static func needed(for kind: MessageKind) -> Topology.Role? {
        guard case .role(let role, _)? = kind.authority.client else { return nil }
        return role
    }
}

extension CoordinatorCore {
    /// Why `principal` may not send a `kind` request for `address` (`nil` for `list`), or `nil`
    /// when it may: the role and its scope come from the table of message kinds
    /// (``MessageKind/authority``). A `list` needs `read` over every machine, since it names them all.
    static func forbidden(_ kind: MessageKind, address: String?, for principal: Gatekeeper.Principal?) -> WireError? {
        guard case .role(let role, let scope)? = kind.authority.client else { return nil }
        // What the role must cover comes from the table too: a grant limited to some machines
        // never covers a request over every machine, whatever address it carries.
        let address = scope == .everyMachine ? nil : address
        let grants: [Topology.ClientGrant]
        switch principal {
        case .trusted: return nil
        case .client(let given): grants = given
        case .worker, nil:
            return WireError(.forbidden, "this connection's key is not a client key of the topology; a \(kind.name) needs the \(role.rawValue) role",
                             address: address)
        }
        let allowed = grants.contains { grant in
            grant.roles.contains(role) && (address.map(grant.covers(address:)) ?? grant.machines.isEmpty)
        }
        guard !allowed else { return nil }
        let target = address.map { "on \($0)" } ?? "over every machine"
        return WireError(.forbidden, "a \(kind.name) needs the \(role.rawValue) role \(target); this client's key has "
            + grants.map { grant in
                grant.roles.sorted().map(\.rawValue).joined(separator: "+") + (grant.machines.isEmpty ? "" : " on \(grant.machines.joined(separator: ", "))")
            }.joined(separator: "; ") + ". Ask for the role in the topology's security.clients, or use a key that has it",
            address: address)
    }

    /// Why a registration for worker instance `name` of group `group`, from a connection whose
    /// key made `principal`, is refused; `nil` when the key is the one the topology binds.
    static func registrationForbidden(_ name: String, group: String, principal: Gatekeeper.Principal?, peer: String?) -> String? {
        let from = peer.map { " (peer \($0))" } ?? ""
        switch principal {
        case .trusted: return nil
        case .worker(let keyGroup) where keyGroup == group: return nil
        case .worker(let keyGroup):
            return "a registration as \(name) came with the key of worker group '\(keyGroup)'\(from); \(name) belongs to group '\(group)', "
                + "so it was refused and the registered worker, if any, keeps the name"
        case .client:
            return "a registration as \(name) came with a client key\(from); workers need their group's key"
        case nil:
            return "a registration as \(name) came from a connection with no key the topology knows\(from)"
        }
    }
}
