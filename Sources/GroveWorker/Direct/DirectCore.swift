import Foundation
import GroveCluster
@_spi(GroveInternal) import GroveWire

/// What a worker serving direct routes does with a client's request that came to its own
/// socket rather than through the coordinator (docs/DIRECT-ROUTES.md, step 3): the pure core,
/// no socket, no clock. It answers as the coordinator would have, with the same functions
/// (``AddressChecks``, ``ClientAccess``, ``ClientRules``, ``Topology/host(ofKey:pool:handedOff:)``),
/// so the two routes cannot drift apart; what only a worker can say (the address is not placed
/// here now, the session with the coordinator is over) is `moved`, before the request reaches a
/// machine, so the client may resend it anywhere.
///
/// Checked in this order, as `CoordinatorCore.decide(client:)` does: sizes (a refusal owed as a
/// busy to a client that does not read), the client's backlog, the kind, the address's form,
/// then what the coordinator's route checks that a worker learns from the coordinator (the
/// session, the key's role, its suspension, placement) and the worker's own bound on what it
/// holds for direct clients.
struct DirectCore {
    /// A request that may go on: to the machine at `address`, under `id` (an id of
    /// ``CorrelationEpoch/direct``, which no coordinator issues), never starting a keyed instance
    /// (`existingOnly`: the runtime answers ``DirectCore/moved(_:address:worker:)`` `not-spawned`
    /// for one it neither holds nor has in its store).
    enum Decision: Equatable {
        case deliver(id: UInt64, existingOnly: Bool)
        /// Answered here: the refusals, busies and log lines to carry out.
        case act([ClientRuleAction])
    }

    /// The worker's name, for the texts.
    let worker: String
    /// What the welcome's `direct` part said; `nil` until a welcome with one, and after the
    /// session ends: every request is then `moved` `not-registered`.
    private(set) var settings: DirectSettings?
    /// The flow-control rules and the busies owed, from the welcome's numbers.
    private(set) var rules: ClientRules?
    /// What the placement check needs of a machine placed here.
    struct Placed: Equatable {
        let keyed: Bool
        /// Its instances are handed off when their worker is lost (`handoff`).
        let handsOff: Bool
    }

    /// The machines the welcome placed here, by name.
    private(set) var placed: [String: Placed] = [:]
    /// The machine the last request named: a batch's requests mostly name one, and its name's
    /// bytes are compared, not hashed.
    private var lastPlaced: (name: [UInt8], placed: Placed)?
    /// Client keys (Z85) and what they may do, from the last `access`.
    private(set) var grants: [String: [Topology.ClientGrant]] = [:]
    private(set) var numbers: [String: UInt32] = [:]
    private(set) var suspended: [UInt32: ClientTable.Suspended] = [:]
    /// The last `placement`: handed-off workers of the pool and those taking theirs back.
    private(set) var view = PlacementView(generation: 0)
    /// Delivered, not answered, by id.
    private(set) var pending = DirectPending()
    /// Clients that sent a batch: their replies go back batched (``DirectReplies``), as the
    /// coordinator's `batchingClients`. Forgotten with the client, and all at once past
    /// ``batchingBound`` (a client that batches is noted again with its next batch).
    private(set) var batching: Set<[UInt8]> = []
    /// At most this many clients are remembered as batching. ZeroMQ does not tell a ROUTER that
    /// a peer left, so a client that sent a batch, read its replies and went away stayed here:
    /// on 076e5e6, 30,000 connections with 255-byte routing ids, each one batch, grew the worker
    /// by 10 MiB, for good. Forgetting costs a client nothing but batched replies until its
    /// next batch (clients read both forms: docs/PROTOCOL.md, "The direct route").
    static let batchingBound = 4096
    /// The worker began a graceful stop (SIGTERM): every request from now on is `moved`
    /// `stopping`, whatever the coordinator says after.
    private(set) var stopping = false
    /// Who sent the last request, by its connection's `User-Id`: a connection's requests come
    /// together (a batch's envelopes), and its key's grants and number are looked up once.
    /// Forgotten with every `access` table and session.
    private var lastSender: (userID: String, sender: Sender)?

    /// What the roles and the crash count need of a request's sender.
    struct Sender {
        /// The client key (Z85), `nil` for a trusted connection (ipc, the worker's own uid).
        let key: String?
        let principal: Gatekeeper.Principal?
        /// The key's number in the `access` table.
        let number: UInt32?
    }

    init(worker: String) {
        self.worker = worker
    }

    // MARK: What the coordinator says

    /// A welcome: its `direct` part (none: an older coordinator, or `direct` off for the group)
    /// and what it places here. The access table and the view wait for their own messages.
    mutating func welcomed(_ welcome: Welcome) {
        guard let direct = welcome.direct, welcome.epoch != CorrelationEpoch.direct.value else {
            // Not served (or a coordinator whose epoch is the direct routes' own): nothing is.
            sessionEnded()
            return
        }
        settings = direct
        rules = ClientRules(clientOutbox: direct.queues.clientOutbox, clientOutboxBytes: direct.queues.clientOutboxBytes,
                            owedBytesPerClient: direct.limits.owedBytesPerClient, owedBytes: direct.limits.owedBytes,
                            addressBytes: direct.limits.addressBytes, payloadBytes: direct.limits.payloadBytes,
                            answerer: "worker \(worker)")
        placed = Dictionary(welcome.machines.map { ($0.name, Placed(keyed: $0.keyed, handsOff: $0.handoff == true)) },
                            uniquingKeysWith: { first, _ in first })
        lastPlaced = nil
        view = PlacementView(generation: 0)
    }

    /// The session with the coordinator is over (lost, superseded, or woke from a stall): until
    /// the next welcome, every direct request is `moved` `not-registered`.
    mutating func sessionEnded() {
        lastSender = nil
        settings = nil
        grants = [:]
        numbers = [:]
        suspended = [:]
    }

    /// An `access` table: the keys, their grants, the suspended ones.
    mutating func access(_ table: ClientTable) {
        lastSender = nil
        grants = [:]
        numbers = [:]
        for client in table.clients {
            numbers[client.key] = client.number
            grants[client.key] = client.grants.map { grant in
                Topology.ClientGrant(key: "", roles: Set(grant.roles.compactMap(Topology.Role.init(rawValue:))), machines: grant.machines)
            }
        }
        suspended = Dictionary(table.suspended.map { ($0.number, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// The sender behind `userID` (``Gatekeeper/trustedUser``, or a key and the peer's address).
    private mutating func sender(of userID: String) -> Sender {
        if let lastSender, lastSender.userID == userID { return lastSender.sender }
        let key = userID == Gatekeeper.trustedUser ? nil : String(userID.prefix(40))
        let sender = Sender(key: key, principal: key.flatMap { grants[$0] }.map(Gatekeeper.Principal.client),
                            number: key.flatMap { numbers[$0] })
        lastSender = (userID, sender)
        return sender
    }

    /// A `placement` view.
    mutating func placement(_ view: PlacementView) {
        self.view = view
    }

    /// The worker began a graceful stop: nothing more reaches a machine by this route (what was
    /// delivered is still answered), every request is `moved` `stopping`.
    mutating func beginStopping() {
        stopping = true
    }

    /// `peer` sent a batch: from now on its replies go back in batches.
    mutating func noteBatch(from peer: [UInt8]) {
        guard !batching.contains(peer) else { return }
        if batching.count >= Self.batchingBound { batching.removeAll(keepingCapacity: true) }
        batching.insert(peer)
    }

    // MARK: Requests

    /// Why a client's batch whose header counts `count` envelopes is refused as a whole, before
    /// any envelope is read (``BatchBound``, the coordinator's check): past the welcome's
    /// `limits.batchEnvelopes`, or the default before a welcome and from an older coordinator.
    func batchRefusal(count: UInt64) -> WireError? {
        BatchBound.refusal(count: count, limit: settings?.limits.batchEnvelopes ?? Topology.Limits().batchEnvelopes,
                           answerer: "worker \(worker)")
    }

    /// The one place that decides what becomes of a direct request (an envelope of a batch is
    /// decided as a lone one).
    /// - Parameters:
    ///   - peer: The client's routing id on the worker's direct socket.
    ///   - userID: The connection's ZAP `User-Id` (``Gatekeeper/trustedUser``, or a key and the
    ///     peer's address).
    ///   - backlog: What waits for this client on the worker's socket.
    mutating func decide(peer: [UInt8], _ request: WireMessage, userID: String, backlog: ClientBacklog = .empty) -> Decision {
        decide(peer: peer, request.header, address: request.address, payloadCount: request.payload.count, userID: userID,
               backlog: backlog)
    }

    /// ``decide(peer:_:userID:backlog:)`` from a request's parts: the runtime makes no message
    /// (and no copy of the payload) for a request it hands on.
    mutating func decide(peer: [UInt8], _ header: Header, address: String, payloadCount: Int, userID: String,
                         backlog: ClientBacklog = .empty) -> Decision {
        let correlation = header.correlation
        let kind = header.kind
        func refuse(_ error: WireError) -> Decision { .act([.send(peer, WireMessage.error(error, correlation: correlation))]) }
        if stopping { return refuse(Self.moved(.stopping, address: address, worker: worker)) }
        // The rules are mutated in place (`rules!`), never through a local copy: a copy would
        // duplicate the ledger's buffers on every request.
        guard let settings, rules != nil else { return refuse(Self.moved(.notRegistered, address: address, worker: worker)) }
        let addressCount = address.utf8.count
        let limits = settings.limits
        if !AddressChecks.withinSizes(addressCount: addressCount, payloadCount: payloadCount, maxAddress: limits.addressBytes,
                                      maxPayload: limits.payloadBytes),
           let refused = AddressChecks.sizeRefusal(addressCount: addressCount, payloadCount: payloadCount, maxAddress: limits.addressBytes,
                                                   maxPayload: limits.payloadBytes, correlation: correlation, answerer: "worker \(worker)",
                                                   address: { address }) {
            if let owed = rules!.owesBusy(to: peer, correlation: correlation, address: nil, refusal: refused.reason, backlog: backlog) {
                return .act(owed)
            }
            return refuse(refused.error)
        }
        // The address's own bytes, not a copy of them: a native string is contiguous (the
        // copy is for the rare one that is not).
        var address = address
        let (owed, printable, keyed) = address.withUTF8 { bytes in
            let raw = UnsafeRawBufferPointer(bytes)
            return (rules!.owesBusy(to: peer, correlation: correlation, address: raw, backlog: backlog), AddressChecks.isPrintableASCII(raw),
                    bytes.firstIndex(of: UInt8(ascii: "/")) != nil)
        }
        if let owed { return .act(owed) }
        guard kind.authority.servedDirect else { return refuse(Self.notServed(kind)) }
        if !printable {
            if let control = AddressChecks.controlCharacter(in: address) {
                return refuse(AddressChecks.controlInAddress(control, correlation: correlation))
            }
            guard AddressChecks.isNFC(address) else { return refuse(AddressChecks.notNFC(address, correlation: correlation)) }
        }
        let sender = sender(of: userID)
        if let key = sender.key {
            if let refusal = ClientAccess.forbidden(kind, address: address, for: sender.principal) { return refuse(refusal) }
            if kind == .event || kind == .echo, let number = sender.number, let suspension = suspended[number] {
                return refuse(ClientAccess.suspended(key: key, crashes: suspension.crashes, patterns: suspension.patterns, address: address))
            }
        }
        if let reason = misplaced(address) { return refuse(Self.moved(reason, address: address, worker: worker)) }
        if let busy = busy(adding: addressCount + payloadCount, address: address, readsSlowly: backlog.messages > 0) {
            return refuse(busy)
        }
        // The id carries the sender's number: the flight log records it, so a crash report
        // names who sent the event (DirectRequestID). Its sequence wraps; one still pending
        // keeps its id, and the next free one is taken (DirectPending).
        let id = pending.insert(DirectPending.Request(peer: peer, correlation: correlation, address: address,
                                                      bytes: addressCount + payloadCount), sender: sender.number ?? 0)
        // A key part (a `/` byte, as `MachineAddress.hasKey`): an instance, never started here.
        // An `echo` goes no further than the worker, which answers it whether or not the
        // instance is here.
        return .deliver(id: id, existingOnly: keyed && kind != .echo)
    }

    /// Why `address` is not served here now, if it is not: `not-here` for a machine not placed
    /// here, a key whose home is another worker (or this one, handed off), or a key homed on a
    /// worker its adopted instances are being handed back to. Read from the address's bytes,
    /// split as ``MachineAddress`` splits it (at the first `/` byte).
    mutating func misplaced(_ address: String) -> WireError.Reason? {
        var address = address
        return address.withUTF8 { misplaced(bytes: $0) }
    }

    private mutating func misplaced(bytes address: UnsafeBufferPointer<UInt8>) -> WireError.Reason? {
        let slash = address.firstIndex(of: UInt8(ascii: "/"))
        let name = UnsafeBufferPointer(rebasing: address[..<(slash ?? address.endIndex)])
        guard let machine = placedMachine(named: name) else { return .notHere }
        guard machine.keyed, let slash, slash + 1 < address.endIndex, let pool = settings?.pool else { return nil }
        let key = UnsafeBufferPointer(rebasing: address[(slash + 1)...])
        let handedOff = machine.handsOff ? Set(view.handedOff) : []
        if machine.handsOff, !view.handingBack.isEmpty, let home = Topology.host(ofKeyBytes: key, pool: pool, handedOff: []),
           view.handingBack.contains(home) {
            return .notHere
        }
        return Topology.host(ofKeyBytes: key, pool: pool, handedOff: handedOff) == worker ? nil : .notHere
    }

    /// The machine placed here under `name`, if one is.
    private mutating func placedMachine(named name: UnsafeBufferPointer<UInt8>) -> Placed? {
        if let lastPlaced, lastPlaced.name.count == name.count,
           name.isEmpty || lastPlaced.name.withUnsafeBytes({ memcmp($0.baseAddress!, name.baseAddress!, name.count) == 0 }) {
            return lastPlaced.placed
        }
        guard let machine = placed[String(decoding: name, as: UTF8.self)] else { return nil }
        lastPlaced = (Array(name), machine)
        return machine
    }

    /// The worker's bound on the direct requests it holds unanswered (``RequestBound``, the
    /// coordinator's rule for what it forwards to one worker): `queues.workerOutbox` requests and
    /// `queues.workerOutboxBytes` bytes, half of each for a client whose replies wait unread.
    /// Replies are not counted ahead: the worker sees each reply's size as it sends it.
    func busy(adding bytes: Int, address: String, readsSlowly: Bool) -> WireError? {
        guard let queues = settings?.queues else { return nil }
        return RequestBound.busy(unanswered: pending.count, heldBytes: pending.bytes, adding: bytes, expectedReplyBytes: 0,
                                 workerOutbox: queues.workerOutbox, workerOutboxBytes: queues.workerOutboxBytes,
                                 holder: .worker(worker), address: address, readsSlowly: readsSlowly)
    }

    /// The answer to direct request `id`: whom to send it to, under the client's correlation, and
    /// what to send in its place when it does not fit what waits for the client (`reply-dropped`).
    /// `nil` for an id not pending (answered already, or not a direct one).
    mutating func answered(_ id: UInt64, kind: MessageKind, size: Int, backlog: ClientBacklog = .empty)
        -> (peer: [UInt8], correlation: UInt64, replacement: WireMessage?, warning: String?)? {
        guard let request = pending.remove(id) else { return nil }
        let dropped = rules?.admitReply(to: request.peer, size: size, kind: kind, correlation: request.correlation,
                                        address: request.address, backlog: backlog)
        return (request.peer, request.correlation, dropped?.replacement, dropped?.warning)
    }

    /// A client that went away (its routing id unreachable): owed nothing more.
    mutating func forget(_ peer: [UInt8]) {
        rules?.forget(client: peer)
        batching.remove(peer)
    }

    /// The busies owed to `peer` that fit now that its queue drained.
    mutating func drained(_ peer: [UInt8], backlog: ClientBacklog) -> [ClientRuleAction] {
        rules?.releaseBusies(to: peer, backlog: backlog) ?? []
    }
}
