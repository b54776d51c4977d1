package import GroveWire

extension Topology.Role {
    /// The role a client request needs, from the table of message kinds
    /// (``MessageKind/authority``); `nil` for kinds clients may not send at all (refused as
    /// such wherever a client's request is decided), for batches, whose envelopes are checked
    /// one by one, and for `locate`, which any role allows (``MessageAuthority/ClientUse/anyRole(_:)``).
    package static func needed(for kind: MessageKind) -> Topology.Role? {
        guard case .role(let role, _)? = kind.authority.client else { return nil }
        return role
    }
}

/// Whether a client may send a request: its key's roles (``Topology/ClientGrant``) against the
/// table of message kinds, and a suspended key's events. The coordinator asks it of every request
/// a client sends it; a worker serving a client directly is to ask the very same
/// (docs/DIRECT-ROUTES.md, 2.1), so the two cannot answer differently.
package enum ClientAccess {
    /// Why `principal` may not send a `kind` request for `address` (`nil` for `list`), or `nil`
    /// when it may: the role and its scope come from the table of message kinds
    /// (``MessageKind/authority``). A `list` needs `read` over every machine, since it names them all.
    /// Asked only of a client with a key (CURVE; a trusted peer is never asked), whose every
    /// message costs a decryption besides: not `@inlinable`.
    package static func forbidden(_ kind: MessageKind, address: String?, for principal: Gatekeeper.Principal?) -> WireError? {
        let role: Topology.Role?, scope: MessageAuthority.Scope
        switch kind.authority.client {
        case .role(let needed, let covering)?: (role, scope) = (needed, covering)
        case .anyRole(let covering)?: (role, scope) = (nil, covering)
        case .eachEnvelope?, nil: return nil
        }
        // What the role must cover comes from the table too: a grant limited to some machines
        // never covers a request over every machine, whatever address it carries.
        let address = scope == .everyMachine ? nil : address
        switch principal {
        case .trusted: return nil
        case .client(let grants):
            let allowed = grants.contains { grant in
                (role.map(grant.roles.contains) ?? !grant.roles.isEmpty)
                    && (address.map(grant.covers(address:)) ?? grant.machines.isEmpty)
            }
            return allowed ? nil : refusal(kind, role: role, address: address, grants: grants)
        case .worker, nil:
            return refusal(kind, role: role, address: address, grants: nil)
        }
    }

    /// The refusal ``forbidden(_:address:for:)`` returns, naming the role the request needs
    /// (`nil`: any role) and the roles the key has (`grants`; `nil` for a key that is no client key).
    package static func refusal(_ kind: MessageKind, role: Topology.Role?, address: String?,
                                grants: [Topology.ClientGrant]?) -> WireError {
        let needs = role.map { "the \($0.rawValue) role" } ?? "a role (read, send or admin)"
        let request = ("aeiou".contains(kind.name.prefix(1)) ? "an " : "a ") + kind.name
        guard let grants else {
            return WireError(.forbidden, "this connection's key is not a client key of the topology; \(request) needs \(needs)",
                             address: address)
        }
        let target = address.map { "on \($0)" } ?? "over every machine"
        return WireError(.forbidden, "\(request) needs \(needs) \(target); this client's key has "
            + grants.map { grant in
                grant.roles.sorted().map(\.rawValue).joined(separator: "+") + (grant.machines.isEmpty ? "" : " on \(grant.machines.joined(separator: ", "))")
            }.joined(separator: "; ") + ". Ask for the role in the topology's security.clients, or use a key that has it",
            address: address)
    }

    /// The refusal of an event or echo for `address` from the client key `key` (Z85), suspended
    /// after `crashes` worker crashes were attributed to its events (of `patterns`, described).
    package static func suspended(key: String, crashes: Int, patterns: [String], address: String) -> WireError {
        let patterns = patterns.isEmpty ? "" : " (\(patterns.joined(separator: ", ")))"
        return WireError(.forbidden, "this client's key \(key) is suspended: \(crashes) worker crashes were attributed to its "
            + "events\(patterns), so its events are refused; its reads still work. An admin lifts the suspension with "
            + "`fsm-send suspensions lift '\(key)'` once the cause is understood", address: address)
    }
}
