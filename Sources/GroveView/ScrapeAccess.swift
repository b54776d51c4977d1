package import GroveCluster
import Foundation

/// Who may scrape the metrics endpoint when the topology asks for tokens
/// (`metrics.requireToken`, always so off loopback): a scraper sends
/// `Authorization: Bearer <token>`, a ``KeyToken`` for ``KeyToken/Purpose/metrics`` made by a
/// client key of the topology (`fsm-send metrics-token`), and the key's grants must hold the
/// `read` role over every machine, as a client's `list` or `snapshot` needs (the metrics name
/// every machine type). Pure: the time is passed in.
package struct ScrapeAccess: Sendable {
    /// What a scrape's `Authorization` header earns.
    package enum Decision: Equatable, Sendable {
        case allowed
        /// No token, or one this topology's keys did not make: 401.
        case unauthenticated(String)
        /// A valid token whose key may not read every machine: 403.
        case forbidden(String)
    }

    private var keys: [String: (shared: [UInt8], name: String, grants: [Topology.ClientGrant])] = [:]

    package init() {}

    /// Lets the client key `publicKey` make scrape tokens, with its `grants`.
    package mutating func trust(publicKey: [UInt8], shared: [UInt8], name: String, grants: [Topology.ClientGrant]) {
        keys[KeyToken.hex(publicKey)] = (shared, name, grants)
    }

    /// The decision for a request whose `Authorization` header is `authorization` (`nil` when
    /// it sent none), at `nowSeconds` since 1970.
    package func decide(authorization: String?, nowSeconds: Int64) -> Decision {
        let how = "make one with `fsm-send metrics-token --key-file <client key>_secret --coordinator-key <coordinator key>` "
            + "and send it as `Authorization: Bearer <token>` (Prometheus: `authorization: {credentials_file: …}`)"
        guard let authorization else { return .unauthenticated("the metrics endpoint needs a token: " + how) }
        let words = authorization.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard words.count == 2, words[0].lowercased() == "bearer" else {
            return .unauthenticated("expected `Authorization: Bearer <token>`: " + how)
        }
        let token = words[1].trimmingCharacters(in: .whitespaces)
        guard let parts = KeyToken.parse(token), let key = keys[parts.publicKey],
              let publicKey = KeyToken.bytes(hex: parts.publicKey[...]),
              KeyToken.verify(parts.mac, shared: key.shared, publicKey: publicKey, expiresAt: parts.expiresAt, for: .metrics) else {
            return .unauthenticated("this token is not one a client key of the topology made for the metrics (a view token is not): " + how)
        }
        guard parts.expiresAt > nowSeconds else { return .unauthenticated("this token expired: " + how) }
        guard parts.expiresAt <= nowSeconds + KeyToken.Purpose.metrics.maxLifetimeSeconds else {
            return .unauthenticated("this token is valid for longer than 30 days, which the metrics endpoint does not accept: "
                + "make one with `fsm-send metrics-token --days` at most 30")
        }
        guard ViewAccess.Viewer(grants: key.grants, name: key.name).readsEveryMachine else {
            return .forbidden("the metrics name every machine type, so scraping needs the read role over every machine, "
                + "which \(key.name) does not have: give it in the topology's security.clients, or use a key that has it")
        }
        return .allowed
    }
}
