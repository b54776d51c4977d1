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
    private struct State {
        var core: DirectCore
        var gatekeeper: Gatekeeper
        var collecting = false
        var held: [Outbound] = []
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

    // MARK: Requests and replies (the runtime)

    /// What becomes of one direct request (``DirectCore/decide(peer:_:userID:backlog:)``).
    func decide(peer: [UInt8], _ request: WireMessage, userID: String, backlog: ClientBacklog) -> DirectCore.Decision {
        state.withLock { $0.core.decide(peer: peer, request, userID: userID, backlog: backlog) }
    }

    /// From now until ``end()``, what is sent here is held: a turn's replies leave after its commit.
    func begin() { state.withLock { $0.collecting = true } }

    /// Sends what the turn held, in order.
    func end() {
        let held = state.withLock { state in
            state.collecting = false
            defer { state.held = [] }
            return state.held
        }
        for message in held { loop.post(message) }
    }

    /// A reply under a direct id (`correlation`): mapped back to its client on the I/O thread.
    func reply(_ kind: MessageKind, flags: Header.Flags, correlation: UInt64, address: String, payload: some Collection<UInt8>) {
        post(Outbound(socket: socket, frames: [Header(kind, flags: flags, correlation: correlation).bytes, Array(address.utf8),
                                               Array(payload)]))
    }

    /// Carries out what the core decided for a request it answered itself.
    func carryOut(_ actions: [ClientRuleAction]) {
        for action in actions {
            switch action {
            case .send(let peer, let message):
                post(Outbound(socket: socket, frames: [peer, message.header.bytes, Array(message.address.utf8), message.payload]))
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

    private func post(_ message: Outbound) {
        let now = state.withLock { state -> Bool in
            guard state.collecting else { return true }
            state.held.append(message)
            return false
        }
        if now { loop.post(message) }
    }

    /// Replaces the held replies to `addresses` (`state`, `accepted`) by `moved` `not-committed`:
    /// the turn's commit did not keep what they ran (another worker owns them now).
    func withdraw(repliesTo addresses: Set<String>, worker: String) {
        guard !addresses.isEmpty else { return }
        state.withLock { state in
            for index in state.held.indices where state.held[index].frames.count == 3 {
                let frames = state.held[index].frames
                guard let header = try? Header(frames[0]), header.kind == .state || header.kind == .accepted else { continue }
                let address = String(decoding: frames[1], as: UTF8.self)
                guard addresses.contains(address) else { continue }
                let error = DirectCore.moved(.notCommitted, address: address, worker: worker)
                state.held[index] = Outbound(socket: socket, frames: [Header(.error, correlation: header.correlation).bytes, frames[1],
                                                                      WireMessage.error(error, correlation: 0).payload])
            }
        }
    }

    // MARK: The I/O thread

    /// Sends one message posted for the direct socket: a reply under a direct id goes to its
    /// client under the client's correlation (or `reply-dropped` in its place); a message that
    /// names its client already goes as it is.
    func send(_ frames: [[UInt8]], io: LoopIO) {
        if frames.count == 4 { return io.send(socket, frames) }
        guard frames.count == 3, let header = try? Header(frames[0]) else { return }
        let backlog = state.withLock { $0.core.pending[header.correlation]?.peer }.map { backlogOf($0, io: io) } ?? .empty
        let answer = state.withLock {
            $0.core.answered(header.correlation, kind: header.kind, size: frames[1].count + frames[2].count, backlog: backlog)
        }
        guard let answer else { return }
        if let warning = answer.warning { log.warning("\(warning)") }
        if let replacement = answer.replacement {
            return io.send(socket, [answer.peer, replacement.header.bytes, Array(replacement.address.utf8), replacement.payload])
        }
        io.send(socket, [answer.peer, Header(header.kind, flags: header.flags, correlation: answer.correlation).bytes, frames[1], frames[2]])
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
