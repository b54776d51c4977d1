import Foundation
import GroveCluster
@_spi(GroveInternal) import GroveWire
import Logging
import Synchronization
import ZeroMQ

/// A worker's direct endpoint (docs/DIRECT-ROUTES.md, step 3): the ROUTER clients send to
/// directly, what decides their requests (``DirectCore``) and who may connect (``Gatekeeper``,
/// domain `grove.direct`), and the replies held back while a turn runs. Safe from any thread: the
/// runtime decides and replies on the loop's executor, the I/O thread sends and answers ZAP.
///
/// Replies leave as a forwarded event's do: a host answers under the request's
/// ``CorrelationEpoch/direct`` id (``WorkerLink`` sends such replies here), the turn holds them
/// until its commit (``begin()``, ``end()``), and the I/O thread maps each id back to its client
/// and correlation (``send(_:io:)``), with the client's backlog in hand for `reply-dropped`.
final class DirectRoute: Sendable {
    /// What the route sends a client, held in the form it was made in until the I/O thread
    /// takes it: a reply is not made into frames, only to be read again there.
    enum Outgoing: Equatable {
        /// A reply under a direct id, mapped to its client (and its correlation) on the I/O thread.
        case reply(MessageKind, flags: Header.Flags, id: UInt64, address: String, payload: [UInt8])
        /// A message that names its client already (a refusal, a busy): `[peer, header, address, payload]`.
        case named([[UInt8]])
    }

    private struct State {
        var core: DirectCore
        var gatekeeper: Gatekeeper
        var collecting = false
        /// What the running turn made, until its commit.
        var held: [Outgoing] = []
        /// What waits for the I/O thread, in order; one wake-up is posted when it stops being empty.
        var ready: [Outgoing] = []
    }

    /// The endpoint as bound (registered with the coordinator, which tells clients).
    let endpoint: String
    let socket: SocketID
    private let loop: WorkerLoop
    private let state: Mutex<State>
    private let log: Logger

    init(worker: String, endpoint: String, socket: SocketID, loop: WorkerLoop, curve: Bool, uid: UInt32 = getuid(),
         log: Logger = Logger(label: "grove.worker")) {
        self.endpoint = endpoint
        self.socket = socket
        self.loop = loop
        self.log = log
        state = Mutex(State(core: DirectCore(worker: worker), gatekeeper: Gatekeeper(direct: endpoint, curve: curve, uid: uid)))
    }

    // MARK: What the coordinator says (the runtime, on its executor)

    func welcomed(_ welcome: Welcome) { state.withLock { $0.core.welcomed(welcome) } }

    func sessionEnded() { state.withLock { $0.core.sessionEnded() } }

    /// The `access` table: the core judges requests by it, the gatekeeper admits its keys.
    func access(_ table: ClientTable) {
        var keys: [CurveKey: [Topology.ClientGrant]] = [:]
        for client in table.clients {
            guard let key = CurveKey(z85: client.key) else { continue }
            keys[key, default: []] += client.grants.map { grant in
                Topology.ClientGrant(key: client.key, roles: Set(grant.roles.compactMap(Topology.Role.init(rawValue:))),
                                     machines: grant.machines)
            }
        }
        state.withLock { state in
            state.core.access(table)
            state.gatekeeper.replaceClients(keys)
        }
    }

    func placement(_ view: PlacementView) { state.withLock { $0.core.placement(view) } }

    /// The pool a keyed instance's key is hashed over, from the welcome; `nil` before it.
    var pool: [String]? { state.withLock { $0.core.settings?.pool } }

    /// The worker began a graceful stop (SIGTERM): every request from now on is answered `moved`
    /// `stopping` before it reaches a machine; what was delivered is still answered.
    func beginStopping() { state.withLock { $0.core.beginStopping() } }

    // MARK: Requests and replies (the runtime)

    /// What becomes of one direct request (``DirectCore/decide(peer:_:userID:backlog:)``).
    func decide(peer: [UInt8], _ header: Header, address: String, payloadCount: Int, userID: String,
                backlog: ClientBacklog) -> DirectCore.Decision {
        state.withLock { $0.core.decide(peer: peer, header, address: address, payloadCount: payloadCount, userID: userID, backlog: backlog) }
    }

    /// Why a batch whose header counts `count` envelopes is refused whole (``DirectCore/batchRefusal(count:)``).
    func batchRefusal(count: UInt64) -> WireError? { state.withLock { $0.core.batchRefusal(count: count) } }

    /// `peer` sent a batch: its replies go back in batches from now on.
    func noteBatch(from peer: [UInt8]) { state.withLock { $0.core.noteBatch(from: peer) } }

    /// From now until ``end()``, what is sent here is held: a turn's replies leave after its commit.
    func begin() { state.withLock { $0.collecting = true } }

    /// Sends what the turn held, in order.
    func end() {
        let wake = state.withLock { state -> Bool in
            state.collecting = false
            guard !state.held.isEmpty else { return false }
            let wasEmpty = state.ready.isEmpty
            if wasEmpty { swap(&state.ready, &state.held) } else { state.ready += state.held }
            state.held.removeAll(keepingCapacity: true)
            return wasEmpty
        }
        // One hand-off: the I/O thread takes the turn's replies together, and batches them per client.
        if wake { wakeIO() }
    }

    /// A reply under a direct id (`correlation`): mapped back to its client on the I/O thread.
    func reply(_ kind: MessageKind, flags: Header.Flags, correlation: UInt64, address: String, payload: some Collection<UInt8>) {
        post(.reply(kind, flags: flags, id: correlation, address: address, payload: Array(payload)))
    }

    /// Carries out what the core decided for a request it answered itself.
    func carryOut(_ actions: [ClientRuleAction]) {
        for action in actions {
            switch action {
            case .send(let peer, let message):
                post(.named([peer, message.header.bytes, Array(message.address.utf8), message.payload]))
            case .warn(let line):
                log.warning("\(line)")
            case .countedBusies:
                break  // the worker's metrics do not count direct busies yet
            }
        }
    }

    /// Answers `peer` with `error` under its own correlation (a request the core never saw: a
    /// malformed message).
    func refuse(_ peer: [UInt8], _ error: WireError, correlation: UInt64) {
        carryOut([.send(peer, WireMessage.error(error, correlation: correlation))])
    }

    private func post(_ outgoing: Outgoing) {
        let wake = state.withLock { state -> Bool in
            guard !state.collecting else {
                state.held.append(outgoing)
                return false
            }
            state.ready.append(outgoing)
            return state.ready.count == 1
        }
        if wake { wakeIO() }
    }

    /// Tells the I/O thread that something is ready: an empty message for the direct socket,
    /// which it answers by taking what is ready (``takeReady()``).
    private func wakeIO() { loop.post(Outbound(socket: socket, frames: [])) }

    /// What is ready for the I/O thread, in order; the route holds nothing of it after.
    func takeReady() -> [Outgoing] {
        state.withLock { state in
            defer { state.ready = [] }
            return state.ready
        }
    }

    /// Replaces the held replies to `addresses` (`state`, `accepted`) by `moved` `not-committed`:
    /// the turn's commit did not keep what they ran (another worker owns them now).
    func withdraw(repliesTo addresses: Set<String>, worker: String) {
        guard !addresses.isEmpty else { return }
        state.withLock { state in
            for index in state.held.indices {
                guard case .reply(let kind, _, let id, let address, _) = state.held[index], kind == .state || kind == .accepted,
                      addresses.contains(address) else { continue }
                let error = DirectCore.moved(.notCommitted, address: address, worker: worker)
                state.held[index] = .reply(.error, flags: [], id: id, address: address, payload: WireMessage.error(error, correlation: 0).payload)
            }
        }
    }

    // MARK: The I/O thread

    /// Sends what is ready for the direct socket (``replies(to:backlog:)``).
    func send(_ ready: [Outgoing], io: LoopIO) {
        let (out, warnings) = replies(to: ready) { backlogOf($0, io: io) }
        for warning in warnings { log.warning("\(warning)") }
        for frames in out { io.send(socket, frames) }
    }

    /// What to send for what was ready for the direct socket, in order per client: a reply under
    /// a direct id goes to its client under the client's correlation (or `reply-dropped` in its
    /// place), a message that names its client already goes as it is; replies to a client that
    /// batches are gathered in batches (``DirectReplies``). One lock for them all.
    /// - Parameter backlog: What waits for a client on the socket (asked for large replies only).
    /// - Returns: The messages (routing id first) and the warnings to log.
    func replies(to ready: [Outgoing], backlog: ([UInt8]) -> ClientBacklog) -> (messages: [[[UInt8]]], warnings: [String]) {
        var out: [[[UInt8]]] = []
        var warnings: [String] = []
        var replies = DirectReplies()
        state.withLock { state in
            for outgoing in ready {
                switch outgoing {
                case .named(let frames):
                    // Answered before any machine saw it (a refusal, a busy): the client is named.
                    guard frames.count == 4, let header = try? Header(frames[1]) else { continue }
                    if let message = replies.add(to: frames[0], batching: state.core.batching.contains(frames[0]), header.kind,
                                                 flags: header.flags, correlation: header.correlation, address: frames[2], payload: frames[3]) {
                        out.append(message)
                    }
                case .reply(let kind, let flags, let id, let address, let payload):
                    guard let peer = state.core.pending[id]?.peer else { continue }
                    let size = address.utf8.count + payload.count
                    // Only a large reply may be dropped (``ClientRules/admitReply``): no lookup for the rest.
                    var waiting = ClientBacklog.empty
                    if size > ClientRules.smallReply {
                        let queued = backlog(peer)
                        waiting = ClientBacklog(messages: queued.messages, bytes: queued.bytes + replies.building(for: peer))
                    }
                    guard let answer = state.core.answered(id, kind: kind, size: size, backlog: waiting) else { continue }
                    if let warning = answer.warning { warnings.append(warning) }
                    let message = if let replacement = answer.replacement {
                        replies.add(to: peer, batching: state.core.batching.contains(peer), replacement.header.kind,
                                    flags: replacement.header.flags, correlation: replacement.header.correlation,
                                    address: Array(replacement.address.utf8), payload: replacement.payload)
                    } else {
                        replies.add(to: peer, batching: state.core.batching.contains(peer), kind, flags: flags, correlation: answer.correlation,
                                    address: address.utf8, payload: payload)
                    }
                    if let message { out.append(message) }
                }
            }
        }
        out += replies.finish()
        return (out, warnings)
    }

    /// What waits for `peer` on the direct socket.
    func backlogOf(_ peer: [UInt8], io: LoopIO) -> ClientBacklog {
        let waiting = io.backlog(socket, peer: peer)
        return ClientBacklog(messages: waiting.messages, bytes: waiting.bytes)
    }

    /// The socket's queues shrank (or a tick): the busies owed to clients that fit now.
    func releaseBusies(io: LoopIO) {
        let owed = state.withLock { $0.core.rules?.clientsOwed ?? [] }
        for peer in owed {
            let backlog = backlogOf(peer, io: io)
            let actions = state.withLock { $0.core.drained(peer, backlog: backlog) }
            for case .send(let peer, let message) in actions {
                io.send(socket, [peer, message.header.bytes, Array(message.address.utf8), message.payload])
            }
        }
    }

    /// A client that went away is owed nothing more.
    func forget(_ peer: [UInt8]) { state.withLock { $0.core.forget(peer) } }

    /// libzmq asks whether a connection to the direct endpoint may proceed (RFC 27):
    /// `[peer, "", request...]` on `zap`.
    func answer(zapRequest frames: [[UInt8]], on zap: SocketID, io: LoopIO) {
        guard frames.count >= 3, frames[1].isEmpty else { return }
        let answer = state.withLock { $0.gatekeeper.answer(Array(frames[2...])) }
        if let refusal = answer.refusal { log.warning("\(refusal)") }
        io.send(zap, [frames[0], []] + answer.frames)
    }
}
