package import GroveCluster

/// Who may do what in the live view: the tokens it handed out, each bound to a client's grants,
/// and the decision for every page, stream and action. Pure: the caller passes the time and the
/// random bytes, so tests need no clock and no sockets.
///
/// A browser cannot present a CURVE key, so a viewer proves itself with a token instead: one
/// `fsm-launch` prints for the launching user (every role, as the launching user has over ipc),
/// or one `fsm-send view` asked for with a client key, bound to that key's roles
/// (docs/GUIDE.md, "The live view").
package struct ViewAccess: Sendable {
    /// What a viewer asks to do.
    package enum Action: Sendable, Equatable {
        /// See the page and the stream of changes (each machine shown only when covered).
        case watch
        /// Send an event to the machine at this address.
        case send(address: String)
        /// Cancel an effect of the machine at this address.
        case cancel(address: String)
    }

    /// The answer to one request.
    package enum Decision: Sendable, Equatable {
        case allowed(Viewer)
        /// 401: no token, or one this view does not know (expired, or from an earlier run).
        case unauthenticated(String)
        /// 403: the token's grants do not allow it.
        case forbidden(String)
    }

    /// One token's holder: the grants it acts under.
    package struct Viewer: Sendable, Equatable {
        package var grants: [Topology.ClientGrant]
        /// Who it stands for, for the page and the log (a key file's name, or "launching user").
        package var name: String

        package init(grants: [Topology.ClientGrant], name: String) {
            self.grants = grants
            self.name = name
        }

        /// Whether some grant gives `role` on `address`.
        package func may(_ role: Topology.Role, on address: String) -> Bool {
            grants.contains { $0.roles.contains(role) && $0.covers(address: address) }
        }

        /// Whether some grant gives `read` over every machine, as `list`, `snapshot` and the
        /// metrics need (they name every machine or machine type).
        package var readsEveryMachine: Bool {
            grants.contains { $0.roles.contains(.read) && $0.machines.isEmpty }
        }

        /// Whether some grant gives `role` at all.
        package func hasRole(_ role: Topology.Role) -> Bool {
            grants.contains { $0.roles.contains(role) }
        }
    }

    private struct Entry: Sendable {
        var viewer: Viewer
        /// Milliseconds on the caller's clock; `nil`: as long as this view runs.
        var expiresAt: Int64?
    }

    private var tokens: [String: Entry] = [:]
    /// The topology's client keys (hex) that may make their own tokens (``KeyToken``): the
    /// shared secret to check them with and the key's grants.
    private var keys: [String: (shared: [UInt8], viewer: Viewer)] = [:]
    /// The most tokens kept: each `fsm-send view` adds one, and an expired one is dropped when
    /// the next is made.
    package static let capacity = 1024

    package init() {}

    /// Lets the client key `publicKey` make its own tokens (``KeyToken``), acting as `viewer`.
    /// - Parameter shared: The Curve25519 secret the coordinator's secret key shares with it.
    package mutating func trust(publicKey: [UInt8], shared: [UInt8], as viewer: Viewer) {
        keys[KeyToken.hex(publicKey)] = (shared, viewer)
    }

    /// A new token for `viewer`, valid until `expiresAt` (milliseconds on the caller's clock).
    /// - Parameters:
    ///   - random: At least 16 random bytes (the token is their hex).
    ///   - now: The caller's clock, to drop expired tokens first.
    /// - Returns: The token; `nil` when ``capacity`` tokens are still valid.
    package mutating func mint(for viewer: Viewer, random: [UInt8], now: Int64, expiresAt: Int64?) -> String? {
        precondition(random.count >= 16, "a token needs at least 16 random bytes")
        tokens = tokens.filter { $0.value.expiresAt.map { $0 > now } ?? true }
        guard tokens.count < Self.capacity else { return nil }
        let token = random.map { byte in String(byte, radix: 16).count == 1 ? "0" + String(byte, radix: 16) : String(byte, radix: 16) }.joined()
        tokens[token] = Entry(viewer: viewer, expiresAt: expiresAt)
        return token
    }

    /// Whether `token` may do `action` at `now`.
    package func decide(_ action: Action, token: String?, now: Int64) -> Decision {
        guard let token, !token.isEmpty else {
            return .unauthenticated("no access token: open the URL fsm-launch printed (its `view` line), or one `fsm-send view` prints")
        }
        let viewer: Viewer
        if let entry = tokens[token] {
            if let expiresAt = entry.expiresAt, expiresAt <= now {
                return .unauthenticated("this access token expired: ask for a new one with `fsm-send view`")
            }
            viewer = entry.viewer
        } else if let parts = KeyToken.parse(token), let key = keys[parts.publicKey],
                  let publicKey = KeyToken.bytes(hex: parts.publicKey[...]),
                  KeyToken.verify(parts.mac, shared: key.shared, publicKey: publicKey, expiresAt: parts.expiresAt) {
            // Compared in seconds: the expiry is the token holder's to choose, and `* 1000` of
            // one near `Int64.max` would trap (a reader's key ending fsm-launch).
            let nowSeconds = now / 1000
            guard parts.expiresAt > nowSeconds else {
                return .unauthenticated("this access token expired: ask for a new one with `fsm-send view`")
            }
            guard parts.expiresAt <= nowSeconds + KeyToken.maxLifetimeSeconds else {
                return .unauthenticated("this access token is valid for longer than a day, which the view does not accept: ask for one with `fsm-send view --minutes` at most 1440")
            }
            viewer = key.viewer
        } else {
            return .unauthenticated("this access token is not one this view gave or a client key of the topology made (or it is from an earlier run): ask for a new one with `fsm-send view`")
        }
        switch action {
        case .watch:
            return viewer.hasRole(.read) ? .allowed(viewer)
                : .forbidden("\(viewer.name) has no read role: the view shows what read allows; give the key the read role in the topology's security.clients")
        case .send(let address):
            return viewer.may(.send, on: address) ? .allowed(viewer)
                : .forbidden("sending an event to \(address) needs the send role on it, which \(viewer.name) does not have")
        case .cancel(let address):
            return viewer.may(.admin, on: address) ? .allowed(viewer)
                : .forbidden("cancelling an effect of \(address) needs the admin role on it, which \(viewer.name) does not have")
        }
    }

    /// Whether a request's `Host` header names this view as a browser on this host reaches it:
    /// a loopback address or `localhost`, at the port it listens on. Anything else is a page of
    /// another site that rebound its own name to 127.0.0.1 (DNS rebinding), refused.
    package static func isLocalHost(_ host: String?, port: Int) -> Bool {
        guard let host, let colon = host.lastIndex(of: ":"), host[host.index(after: colon)...] == String(port)[...] else { return false }
        let name = host[..<colon]
        if name == "localhost" || name == "[::1]" { return true }
        let parts = name.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { part in UInt8(part) != nil }
    }
}
