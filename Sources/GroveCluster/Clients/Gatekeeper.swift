package import ZeroMQ
import GroveWire

/// Who may connect to the coordinator's endpoints and who they are once connected: the ZAP
/// handler's decisions (RFC 27) as a pure value, in GroveCluster so that a worker serving clients
/// directly can hold one too (docs/DIRECT-ROUTES.md, 2.1). The coordinator's loop answers libzmq's ZAP
/// requests with ``answer(_:)``; every message then carries the `User-Id` given here, which
/// ``principal(userID:)`` turns back into a worker group or a client's grants.
///
/// - CURVE (a topology with a coordinator key): a connection is admitted when its public key is
///   one the topology names for that endpoint: a worker group's key (or a key `fsm-launch` made
///   for a process it started) on the workers endpoint, a client key on the clients endpoint, a
///   client key with an unlimited `read` role on the events endpoint.
/// - NULL over ipc: admitted when the peer process runs as the launching user (libzmq passes
///   the peer's uid with each ipc connection).
/// - NULL over tcp: only in a topology that says `"insecure": true`; everyone is admitted.
///
/// A worker serving direct routes holds one too, for its direct endpoint only (domain
/// `grove.direct`, ``init(direct:curve:uid:)``): it admits the client keys of the coordinator's
/// last `access` table (``replaceClients(_:)``), as the coordinator's clients endpoint admits
/// them; a worker key or an unknown key fails the handshake.
package struct Gatekeeper: Sendable {
    /// What a connection proved to be.
    package enum Principal: Sendable, Equatable {
        /// A worker of this group.
        case worker(group: String)
        /// A client with these grants.
        case client([Topology.ClientGrant])
        /// A process of the launching user over ipc, or anyone on an insecure tcp endpoint:
        /// every role on every machine.
        case trusted
    }

    /// The ZAP domains, one per endpoint: the coordinator's three, and a worker's direct one.
    package enum Endpoint: String, Sendable, CaseIterable {
        case clients = "grove.clients"
        case workers = "grove.workers"
        case events = "grove.events"
        case direct = "grove.direct"
    }

    /// An answer to one ZAP request, and what to log about it.
    package struct Answer: Equatable {
        /// The reply frames (version, request id, status code, status text, user id, metadata).
        package var frames: [[UInt8]]
        /// Whether the connection was admitted.
        package var admitted: Bool
        /// A line for the log when a connection was refused (never a key's secret half).
        package var refusal: String?
    }

    private var workerKeys: [CurveKey: String] = [:]
    private var clientKeys: [CurveKey: [Topology.ClientGrant]] = [:]
    /// Keys refused on the events endpoint for going past `limits.watcherSubscriptions`.
    private var refusedWatchers: Set<CurveKey> = []
    /// Whether each endpoint is tcp (else ipc), by domain.
    private let tcp: Set<Endpoint>
    private let curve: Bool
    private let uid: UInt32

    /// - Parameters:
    ///   - topology: The endpoints and security settings.
    ///   - workerKeys: Each worker group's public key.
    ///   - clientKeys: Each client grant's public key, in the order of `topology.security.clients`.
    ///   - uid: The launching user's id, for ipc peers.
    package init(topology: Topology, workerKeys: [String: CurveKey], clientKeys: [CurveKey], uid: UInt32) {
        curve = topology.security.usesCurve
        let endpoints: [(Endpoint, String)] = [
            (.clients, topology.coordinator.clients), (.workers, topology.coordinator.workers), (.events, topology.coordinator.events),
        ]
        tcp = Set(endpoints.filter { $0.1.hasPrefix("tcp://") }.map(\.0))
        self.uid = uid
        for (group, key) in workerKeys { self.workerKeys[key] = group }
        for (grant, key) in zip(topology.security.clients, clientKeys) { self.clientKeys[key, default: []].append(grant) }
    }

    /// No keys, ipc peers of `uid` only: what a driver holds until it is given the topology's.
    package init(uid: UInt32) {
        curve = false
        tcp = []
        self.uid = uid
    }

    /// What a worker serving direct routes holds for its direct endpoint: no keys until the
    /// coordinator's `access` table (``replaceClients(_:)``); ipc peers of `uid` only.
    /// - Parameters:
    ///   - endpoint: The direct endpoint (tcp, or ipc).
    ///   - curve: Whether the endpoint is a CURVE server (the topology has a coordinator key).
    package init(direct endpoint: String, curve: Bool, uid: UInt32) {
        self.curve = curve
        tcp = endpoint.hasPrefix("tcp://") ? [.direct] : []
        self.uid = uid
    }

    /// Admits exactly these client keys with their grants (a worker's direct endpoint, from the
    /// coordinator's `access` table); connections made before keep their `User-Id`.
    package mutating func replaceClients(_ grants: [CurveKey: [Topology.ClientGrant]]) {
        clientKeys = grants
    }

    /// Admits `key` on the workers endpoint as a worker of `group`: a key `fsm-launch` made for
    /// a process it starts.
    package mutating func admit(worker key: CurveKey, group: String) {
        workerKeys[key] = group
    }

    /// Admits `key` on the clients and events endpoints with `grants`: a key `fsm-launch` made
    /// for its own live view.
    package mutating func admit(client key: CurveKey, grants: [Topology.ClientGrant]) {
        clientKeys[key] = grants
    }

    /// Refuses `key` on the events endpoint from now on: its watcher subscribed past
    /// `limits.watcherSubscriptions`.
    package mutating func refuse(watcher key: CurveKey) {
        refusedWatchers.insert(key)
    }

    /// Admits `key` on the events endpoint again: an admin lifted its refusal.
    package mutating func admit(watcher key: CurveKey) {
        refusedWatchers.remove(key)
    }

    /// Forgets a key ``admit(worker:group:)`` admitted, once its process is gone.
    package mutating func forget(worker key: CurveKey) {
        workerKeys[key] = nil
    }

    /// The principal behind a message's `User-Id` on `endpoint`; `nil` when there is none (an
    /// id this gatekeeper never gave, or a key forgotten since).
    package func principal(userID: String, on endpoint: Endpoint) -> Principal? {
        if userID == Self.trustedUser { return .trusted }
        guard let key = CurveKey(z85: String(userID.prefix(40))) else { return nil }
        switch endpoint {
        case .workers: return workerKeys[key].map { .worker(group: $0) }
        case .clients, .events, .direct: return clientKeys[key].map { .client($0) }
        }
    }

    /// The `User-Id` of a trusted peer (an ipc peer of the launching user, or anyone on an
    /// insecure tcp endpoint). A CURVE peer's is its public key in Z85, a space and its address.
    package static let trustedUser = "trusted"

    /// The client key a `User-Id` names, as the bytes of its Z85 text: what a keyed event's
    /// client id is bound to (``IdempotencyKey/appendBound(_:to:into:correlation:)``); nil for a
    /// trusted peer, which has no key.
    package static func senderKey(ofUserID userID: String) -> [UInt8]? {
        guard userID != trustedUser else { return nil }
        let key = Array(userID.utf8.prefix(IdempotencyKey.senderLength))
        return key.count == IdempotencyKey.senderLength ? key : nil
    }

    /// The answer to one ZAP request: its frames after the REQ envelope.
    package func answer(_ request: [[UInt8]]) -> Answer {
        guard request.count >= 6, String(decoding: request[0], as: UTF8.self) == "1.0" else {
            // Not a ZAP 1.0 request: libzmq never sends one; answer so nothing waits, refusing.
            let id = request.count > 1 ? request[1] : []
            return reply(id, admitted: false, code: "500", text: "not a ZAP 1.0 request", user: "",
                         refusal: "a malformed ZAP request was refused")
        }
        let id = request[1]
        let domain = String(decoding: request[2], as: UTF8.self)
        let address = String(decoding: request[3], as: UTF8.self)
        let mechanism = String(decoding: request[5], as: UTF8.self)
        guard let endpoint = Endpoint(rawValue: domain) else {
            return reply(id, admitted: false, code: "400", text: "unknown domain", user: "",
                         refusal: "a connection from \(address) to an unknown ZAP domain '\(domain)' was refused")
        }
        switch mechanism {
        case "CURVE":
            guard curve, request.count >= 7, let key = CurveKey(bytes: request[6]) else {
                return reply(id, admitted: false, code: "400", text: "CURVE not expected", user: "",
                             refusal: "a CURVE connection from \(address) to the \(endpoint.name) endpoint was refused: this topology has no coordinator key")
            }
            if admits(key, on: endpoint) {
                // The key, then where it connected from: messages about this peer can name both.
                return reply(id, admitted: true, code: "200", text: "OK", user: "\(key.z85) \(address)", refusal: nil)
            }
            return reply(id, admitted: false, code: "400", text: "key not allowed", user: "", refusal: """
                a connection from \(address) to the \(endpoint.name) endpoint was refused: its public key \(key.z85) \
                is not one the topology accepts there\(hint(for: key, on: endpoint))
                """)
        case "NULL":
            if curve {
                return reply(id, admitted: false, code: "400", text: "CURVE required", user: "",
                             refusal: "a connection without CURVE from \(address) to the \(endpoint.name) endpoint was refused; give the client the coordinator's public key and a key of its own")
            }
            if tcp.contains(endpoint) {
                return reply(id, admitted: true, code: "200", text: "OK", user: Self.trustedUser, refusal: nil)
            }
            guard let peer = Self.ipcPeer(address) else {
                return reply(id, admitted: false, code: "400", text: "no peer credentials", user: "",
                             refusal: "an ipc connection to the \(endpoint.name) endpoint without peer credentials (\(address)) was refused")
            }
            guard peer.uid == uid else {
                return reply(id, admitted: false, code: "400", text: "another user", user: "", refusal: """
                    an ipc connection to the \(endpoint.name) endpoint from uid \(peer.uid) (pid \(peer.pid)) was refused: \
                    only processes of uid \(uid), which launched the topology, may connect
                    """)
            }
            return reply(id, admitted: true, code: "200", text: "OK", user: Self.trustedUser, refusal: nil)
        default:
            return reply(id, admitted: false, code: "400", text: "mechanism not supported", user: "",
                         refusal: "a \(mechanism) connection from \(address) to the \(endpoint.name) endpoint was refused: Grove speaks CURVE or, over ipc, NULL")
        }
    }

    private func admits(_ key: CurveKey, on endpoint: Endpoint) -> Bool {
        switch endpoint {
        case .workers: workerKeys[key] != nil
        case .clients, .direct: clientKeys[key] != nil
        case .events: !refusedWatchers.contains(key) && clientKeys[key]?.contains { $0.roles.contains(.read) && $0.machines.isEmpty } ?? false
        }
    }

    private func hint(for key: CurveKey, on endpoint: Endpoint) -> String {
        switch endpoint {
        case .workers where clientKeys[key] != nil: " (it is a client key; workers need their group's key)"
        case .clients where workerKeys[key] != nil: " (it is a worker key; clients need a key from security.clients)"
        case .direct: " (a worker's direct endpoint admits the client keys of the topology only)"
        case .events where refusedWatchers.contains(key):
            " (its watcher subscribed to more than limits.watcherSubscriptions prefixes; it is refused until an admin lifts it: fsm-send suspensions lift 'KEY')"
        case .events where clientKeys[key] != nil: " (watching needs a client key whose read role covers every machine)"
        case .workers, .clients, .events: ""
        }
    }

    private func reply(_ id: [UInt8], admitted: Bool, code: String, text: String, user: String, refusal: String?) -> Answer {
        Answer(frames: [Array("1.0".utf8), id, Array(code.utf8), Array(text.utf8), Array(user.utf8), []],
               admitted: admitted, refusal: refusal)
    }

    /// The uid and pid libzmq appends to an ipc peer's address (`…:uid:gid:pid`).
    static func ipcPeer(_ address: String) -> (uid: UInt32, pid: Int32)? {
        let fields = address.split(separator: ":", omittingEmptySubsequences: false)
        guard fields.count >= 4, let uid = UInt32(fields[fields.count - 3]), UInt32(fields[fields.count - 2]) != nil,
              let pid = Int32(fields[fields.count - 1]) else { return nil }
        return (uid, pid)
    }
}

extension Gatekeeper.Endpoint {
    /// The endpoint's name in a topology: clients, workers, events.
    package var name: String {
        switch self {
        case .clients: "clients"
        case .workers: "workers"
        case .events: "events"
        case .direct: "direct"
        }
    }
}
