import Foundation
import GroveCluster
@_spi(GroveInternal) import GroveWire

/// What the coordinator's I/O thread should do; produced by ``CoordinatorCore``.
enum CoordinatorAction: Sendable, Equatable {
    case toClient([UInt8], WireMessage)
    /// To the registered process of worker instance `name` (on the connection it registered
    /// from); dropped when none is registered.
    case toWorker(String, WireMessage)
    /// To one connection of the workers endpoint by its routing id, registered or not: the
    /// answer to a registration, or to a connection that is no registered process.
    case toPeer([UInt8], WireMessage)
    /// A worker connection is no longer a registered process's: drop what still waits for it.
    case dropQueued(peer: [UInt8])
    case publish(topic: String, WireMessage)
    /// The worker was declared lost: discard what is still queued for it, and tell whoever
    /// watches losses (`fsm-launch` kills a local worker that went silent).
    /// `pid`: the process the coordinator had registered under that name, when it knew one;
    /// a supervisor acts only if that is still the process it runs.
    case lost(worker: String, cause: WorkerLoss, pid: Int32? = nil)
    /// Something an operator should know (a route that failed, a worker name claimed twice).
    case warn(String)
    /// The exit of process `pid` of `worker` was caused by input now quarantined or suspended:
    /// it no longer counts toward the worker group's supervision intensity (`fsm-launch`).
    case forgive(worker: String, pid: Int32, reason: String)
    /// Reset every connection to the events endpoint (how libzmq lets go of the subscriptions it
    /// holds for them), and refuse the watcher key `refusing` (Z85) there from now on.
    case resetWatchers(refusing: String?)
    /// Admit the watcher key (Z85) on the events endpoint again: an admin lifted its refusal.
    case admitWatcher(String)
    /// A worker's heartbeat carried what it counted (a ``MetricsReport`` as JSON): for the
    /// metrics, when the topology serves them (decoded only then).
    case workerMetrics(worker: String, report: [UInt8])
}

/// The coordinator's routing logic as a pure state machine: messages and clock ticks in,
/// actions out. No sockets, no threads, so every rule is unit-tested without ZeroMQ.
///
/// It routes on the header and the address frame; it decodes only control payloads
/// (registration, io call bookkeeping, outputs that routes need).
struct CoordinatorCore {
    struct WorkerSlot {
        let name: String
        let group: String
        var registered = false
        var pid: Int32?
        var lastHeard: ContinuousClock.Instant?
        /// What its registered process said of itself, for `locate` (`+Locate.swift`): its direct
        /// endpoint (`nil`: none), the CURVE key it registered with, its incarnation.
        var direct: String?
        var serverKey: String?
        var incarnation: UInt64?
    }

    /// A request forwarded to a worker, waiting for its reply.
    struct Pending {
        enum Origin { case client([UInt8], UInt64), route(from: String) }
        let origin: Origin
        /// The worker's number (its index in ``workerNames``).
        let worker: Int
        let address: String
        /// The request's address and payload bytes, counted against `queues.workerOutboxBytes`.
        var bytes = 0
        /// Who sent it and which case it carried, for a key's requests only (nil for others): one
        /// reference, so a request without a key copies no more than it did before keys were
        /// numbered (the table of pending requests is on every request's path).
        let witness: Witness?

        init(origin: Origin, worker: Int, address: String, bytes: Int = 0, sender: UInt32 = 0, eventCase: String? = nil) {
            self.origin = origin
            self.worker = worker
            self.address = address
            self.bytes = bytes
            witness = sender == 0 ? nil : Witness(sender: sender, eventCase: eventCase)
        }

        /// The client key that sent it (``Containment/senders``), 0 for none: a client without
        /// a key, or a route.
        var sender: UInt32 { witness?.sender ?? 0 }
        /// The event's case as the coordinator read it (``RequestCase``), for a key's events
        /// only: what a crash report naming this request is held to (`+Poison.swift`).
        var eventCase: String? { witness?.eventCase }
    }

    /// What a crash report naming a key's request is held to (``Pending/witness``).
    final class Witness: Sendable {
        let sender: UInt32
        let eventCase: String?

        init(sender: UInt32, eventCase: String?) {
            self.sender = sender
            self.eventCase = eventCase
        }
    }

    /// An io call in flight between two workers.
    struct Call {
        let origin: String
        let originID: UInt64
        let target: String
        let address: String
        let request: String
        let effect: JSONValue
        /// When the origin stops waiting: the call fails with `timeout` at the first tick after it.
        let deadline: ContinuousClock.Instant
        /// Its timeout, for the failure's message.
        let timeoutMs: Int
    }

    let topology: Topology
    /// The largest request payload accepted: `limits.payloadBytes`, unless a test gives another.
    let maxPayload: Int
    /// The longest address accepted: `limits.addressBytes`.
    let maxAddress: Int
    let eventsEndpoint: String
    let workersEndpoint: String?
    var workers: [String: WorkerSlot] = [:]
    /// The topology's worker instances, numbered in order: the hot path keeps numbers, not
    /// names, so it indexes arrays instead of hashing strings.
    let workerNames: [String]
    let workerNumbers: [String: Int]
    /// Where each machine's requests go, by machine name, worked out from the topology once
    /// (`+Resolve.swift`).
    let routes: MachineRoutes
    /// Whether each worker (by number) has a registered process: `workers[name].registered`,
    /// kept beside it so that placing a request does not copy the worker's slot.
    var registeredNumbers: [Bool]
    var pending = PendingTable()
    /// Requests forwarded to each worker (by number) and not answered yet (the entries of
    /// `pending` by worker).
    var inFlight: [Int]
    /// The bytes of those requests (address and payload), by worker number.
    var inFlightBytes: [Int]
    /// The bytes a reply of each worker is expected to have: the largest of its recent replies,
    /// decaying slowly (`+Workers.swift`, `noteReply`).
    var expectedReplyBytes: [Int]
    /// Busies owed to clients that fell behind, replies dropped for them: the rules for clients
    /// that do not read (``ClientRules``, `+Clients.swift`).
    var clientRules: ClientRules
    /// What the metrics count (`CoordinatorMetrics`): plain integers, always kept (an add each),
    /// read only when a scrape comes.
    var counts = CoordinatorCounts()
    var calls: [UInt64: Call] = [:]
    var callsByOrigin: [String: [UInt64: UInt64]] = [:]
    /// Calls cancelled at the worker running them, until it says their task ended
    /// (`+Cancels.swift`).
    var cancelling: [UInt64: Cancelling] = [:]
    /// Tasks running calls, by the worker running them, against `ioLimits.concurrentPerWorker`:
    /// the calls in `calls` and those in `cancelling` (cancelled, their task not ended yet).
    var callsRunning: [String: Int] = [:]
    /// No call's deadline is earlier: a tick before it looks at no call.
    var earliestCallDeadline: ContinuousClock.Instant?
    var keyedInstances = InstanceBook()
    /// The last full listing's reply payload, with what it was built from (``listingPayload()``).
    var listingCache: (registrations: Int, instances: UInt64, payload: [UInt8])?
    /// This coordinator life's epoch, in the top bits of every id it sends to workers.
    let epoch: CorrelationEpoch
    /// The counter part of the next id.
    var nextID: UInt64 = 1
    /// The worker processes registered, and replaced, under each name (`+Incarnations.swift`).
    var incarnations: [String: Incarnations] = [:]
    var roundRobin: [String: Int] = [:]
    var lastHeartbeat: ContinuousClock.Instant?
    /// When ``tick(now:)`` last ran: a longer gap than the heartbeat timeout means this
    /// coordinator did not run (stopped, starved), not that its workers went silent.
    var lastTick: ContinuousClock.Instant?
    /// Bumped whenever a worker registers or is lost, so the driver recomputes readiness only then.
    var registrations = 0
    /// Topic prefixes the events socket's subscribers asked for (as XPUB reports them).
    var subscriptions: Set<String> = []
    /// Which watcher's key made each of them (`+Subscriptions.swift`).
    var watchers = WatcherAccounts()
    /// Clients that sent batches: their replies may be batched too. Others get one reply per message.
    var batchingClients: Set<[UInt8]> = []
    /// Addresses already resolved to their worker, valid while no worker registers or is lost:
    /// the hot path is one dictionary lookup instead of parsing and placing the address.
    var resolved: [String: (worker: Int, listed: Bool)] = [:]
    var resolvedAt = 0
    /// The bytes of the addresses in `resolved`.
    var resolvedBytes = 0
    /// The bytes of addresses `resolved` holds before it starts over (as it does at 100,000
    /// entries): with the longest addresses, 100,000 would hold 100 MiB. A variable so that
    /// tests reach it with a few requests.
    var resolvedBytesLimit = 8 << 20
    /// Numbers publications and keeps the watched states for `snapshot` (`PublicationLog.swift`).
    var publications: PublicationLog
    /// The connection (routing id) of each worker's registered process, by worker number: where
    /// what the coordinator sends that worker goes. `nil` while none is registered.
    var routingIDs: [[UInt8]?]
    /// The registered processes' connections, by routing id: who sent a message
    /// (`+Connections.swift`).
    var connections: [[UInt8]: Connection] = [:]
    /// Worker messages refused and not logged yet, by worker and kind (`+Authority.swift`).
    var refusals: [RefusalKey: RefusalTally] = [:]
    /// This coordinator's wall clock, read off its monotonic one: a registration's claimed
    /// start time is never later than its arrival (`+Incarnations.swift`).
    let wallClock: CoordinatorWallClock
    /// Worker crashes, the patterns they quarantined and the client keys they suspended
    /// (`CoordinatorCore+Poison.swift`).
    var containment: Containment
    /// Where a pool's keyed instances live while one of its workers is handed off
    /// (`CoordinatorCore+Handoff.swift`).
    var handoff: HandoffBook
    /// The client keys (Z85) admitted and their grants, for `access` (`+Direct.swift`): the
    /// topology's, then those ``admitClients(_:)`` adds.
    var clientGrants: [String: [Topology.ClientGrant]] = [:]
    /// The last `placement` each worker group serving direct routes was sent (`+Direct.swift`).
    var placementSent: [String: PlacementView] = [:]

    /// - Parameters:
    ///   - epoch: This coordinator life's epoch (random in a real coordinator; 0, ids 1, 2, 3,
    ///     in tests that do not care).
    ///   - publicationEpoch: The epoch its publications are numbered in (random in a real
    ///     coordinator, never 0).
    ///   - wallClock: The wall clock at an instant of the monotonic one (in a real coordinator,
    ///     both read when it starts).
    init(topology: Topology, eventsEndpoint: String, workersEndpoint: String? = nil, maxPayload: Int? = nil,
         epoch: CorrelationEpoch = CorrelationEpoch(0), publicationEpoch: CorrelationEpoch = CorrelationEpoch(1),
         wallClock: CoordinatorWallClock = .now) {
        self.topology = topology
        self.wallClock = wallClock
        self.epoch = epoch
        publications = PublicationLog(epoch: publicationEpoch, maximumStateBytes: topology.limits.watchedStateBytes,
                                      maximumPublicationBytes: topology.limits.publicationBytes)
        containment = Containment(settings: topology.poison)
        handoff = HandoffBook(topology: topology)
        self.eventsEndpoint = eventsEndpoint
        self.workersEndpoint = workersEndpoint
        self.maxPayload = maxPayload ?? topology.limits.payloadBytes
        maxAddress = topology.limits.addressBytes
        clientRules = ClientRules(topology: topology, payloadBytes: self.maxPayload)
        workerNames = topology.workerInstances.map(\.name)
        workerNumbers = Dictionary(workerNames.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
        inFlight = Array(repeating: 0, count: workerNames.count)
        inFlightBytes = inFlight
        expectedReplyBytes = inFlight
        routingIDs = Array(repeating: nil, count: workerNames.count)
        registeredNumbers = Array(repeating: false, count: workerNames.count)
        routes = MachineRoutes(topology: topology, workerNumbers: workerNumbers)
        for instance in topology.workerInstances {
            workers[instance.name] = WorkerSlot(name: instance.name, group: instance.group)
        }
    }

    var allRegistered: Bool { workers.values.allSatisfy(\.registered) }

    var unregistered: [String] { workers.values.filter { !$0.registered }.map(\.name).sorted() }

    /// A fresh id for a request or call sent to a worker: this life's epoch and the next count
    /// (1 again after 2^40-1, never 0).
    mutating func takeID() -> UInt64 {
        defer { nextID = nextID == CorrelationEpoch.counterMask ? 1 : nextID + 1 }
        return epoch.id(nextID)
    }

    // MARK: - Clients

    /// A message from a client connection, by the road the driver takes
    /// (``CoordinatorDriver/received(_:io:)``): a lone request is put to
    /// ``decide(client:_:as:backlog:sender:)`` as a ``MessageView`` of its frames, a batch as a
    /// view of each envelope (``envelopes(ofBatch:count:addressCount:from:)``), and frames that are no
    /// message are refused here. The driver then copies bytes where a decision says; this
    /// returns the forwarded requests as messages instead, for tests and tools.
    /// - Parameter frameCount: How many frames the message had after the routing id, those the
    ///   socket dropped unread included (``Inbound/frameCount``); `nil`: `frames.count`.
    mutating func fromClient(_ identity: [UInt8], _ frames: ArraySlice<[UInt8]>, frameCount: Int? = nil) -> [CoordinatorAction] {
        let frameCount = frameCount ?? frames.count
        guard frames.count == 3, frameCount == 3, let header = try? Header(frames[frames.startIndex]) else {
            do {
                _ = try WireMessage(frames: frames, received: frameCount)
                return [.toClient(identity, WireMessage.error(WireError(.malformedFrame, "not a message"), correlation: 0))]
            } catch {
                return [.toClient(identity, WireMessage.error(error, correlation: error.correlation ?? 0))]
            }
        }
        let address = frames[frames.startIndex + 1], payload = frames[frames.startIndex + 2]
        guard header.kind == .batch else {
            return MessageView.with(header, address: address, payload: payload) { forwarding(decide(client: identity, $0), of: $0) }
        }
        let parsed: [Envelope]
        switch envelopes(ofBatch: payload, count: header.correlation, addressCount: address.count, from: identity) {
        case .success(let envelopes): parsed = envelopes
        case .failure(let refusal): return refusal.actions
        }
        return payload.withUnsafeBytes { batch in
            parsed.flatMap { envelope in
                let view = MessageView(envelope, in: batch)
                return forwarding(decide(client: identity, view), of: view)
            }
        }
    }

    /// The envelopes of a client's batch, or its refusal as a whole (correlation 0, not one
    /// envelope's, which would look like an answer to it): a header that counts more than
    /// `limits.batchEnvelopes` before any envelope is read. The client is noted as batching.
    /// - Parameter addressCount: The size of the batch's address frame, which must be empty.
    mutating func envelopes(ofBatch batch: [UInt8], count: UInt64, addressCount: Int,
                            from identity: [UInt8]) -> Result<[Envelope], BatchRefusal> {
        do throws(WireError) {
            if let refusal = Batch.addressRefusal(addressCount) { throw refusal }
            // Bounded from the header before any envelope is read (limits.batchEnvelopes).
            if let refusal = BatchBound.refusal(count: count, limit: topology.limits.batchEnvelopes) { throw refusal }
            let envelopes = try Batch.envelopes(in: batch, count: count)
            let answeredHere = envelopes.count { $0.kind.authority.answeredByCoordinator }
            guard answeredHere <= Self.answeredHerePerBatch else {
                throw WireError(.malformedFrame, """
                    the batch holds \(answeredHere) requests the coordinator answers itself (list, snapshot, poison, locate), \
                    over the \(Self.answeredHerePerBatch) a batch may hold: each one is work in the one turn that reads the \
                    batch, which would hold every other client and worker back. Split them over batches \
                    (docs/PROTOCOL.md, 'Batches')
                    """)
            }
            batchingClients.insert(identity)
            return .success(envelopes)
        } catch {
            return .failure(BatchRefusal(actions: [.toClient(identity, WireMessage.error(error, correlation: 0))]))
        }
    }

    /// The requests the coordinator answers itself (``MessageAuthority/answeredByCoordinator``)
    /// one batch may hold: events and gets are bounded by the workers' queues, these by nothing
    /// else, and a batch of 100,000 `list`s held the coordinator for minutes.
    static let answeredHerePerBatch = 64

    /// Why a client's batch was refused as a whole, as what to send.
    struct BatchRefusal: Error {
        let actions: [CoordinatorAction]
    }

    /// A decision as actions: a forwarded request as the message the worker gets.
    private func forwarding(_ decision: ClientDecision, of request: MessageView) -> [CoordinatorAction] {
        switch decision {
        case .forward(let worker, let id):
            let message = WireMessage(Header(request.kind, flags: request.header.flags, correlation: id),
                                      address: String(decoding: request.addressBytes, as: UTF8.self), payload: Array(request.payloadBytes))
            return [.toWorker(workerNames[worker], message)]
        case .act(let actions):
            return actions
        }
    }

    /// The one place that decides what becomes of a client's request, lone or batched: forwarded
    /// to its machine's worker under a new id, answered here (a listing), or refused.
    /// - Parameter principal: Who the client's key proved it is (`.trusted` without CURVE);
    ///   `nil` for a key the gatekeeper does not know (any more).
    /// - Parameter backlog: What waits for this client in the coordinator (its replies ZeroMQ has
    ///   not taken): a client with too much outstanding is owed a `busy` (`+Clients.swift`).
    /// - Parameter sender: The client's key as ``Containment/number(ofSender:)`` numbers it; 0
    ///   without CURVE. A suspended key's events are refused (`+Poison.swift`).
    mutating func decide(client identity: [UInt8], _ request: MessageView, as principal: Gatekeeper.Principal? = .trusted,
                         backlog: ClientBacklog = .empty, sender: UInt32 = 0) -> ClientDecision {
        let correlation = request.correlation
        // Sizes first: an address or a payload over its limit is refused before anything of it is
        // kept. To a client that does not read, the refusal is owed as a busy would be.
        if !withinSizes(request), let refused = sizeRefusal(request) {
            if let owed = owesBusy(to: identity, correlation: correlation, address: nil, refusal: refused.reason, backlog: backlog) {
                return .act(owed)
            }
            return .act([.toClient(identity, WireMessage.error(refused.error, correlation: correlation))])
        }
        if let owed = owesBusy(to: identity, correlation: correlation, address: request.addressBytes, backlog: backlog) {
            return .act(owed)
        }
        func refuse(_ error: WireError) -> ClientDecision {
            .act([.toClient(identity, WireMessage.error(error, correlation: correlation))])
        }
        // A trace context whose length runs past the payload leaves no payload to read.
        if let problem = request.traceProblem { return refuse(problem) }
        // The kinds clients may not send, and why, come from the table of message kinds.
        func refuseKind(_ kind: MessageKind) -> ClientDecision {
            refuse(WireError(.unknownKind, kind.refusalForClients ?? "\(kind.name) is not a request"))
        }
        switch request.kind {
        case .event, .get, .cancel, .stop, .restart, .echo:
            let address: String
            do {
                address = try request.address()
            } catch {
                return refuse(error)
            }
            if !AddressChecks.isPrintableASCII(request.addressBytes) {
                if let control = AddressChecks.controlCharacter(in: address) {
                    return refuse(AddressChecks.controlInAddress(control, correlation: correlation))
                }
                guard AddressChecks.isNFC(address) else { return refuse(AddressChecks.notNFC(address, correlation: correlation)) }
            }
            if case .trusted? = principal {} else if let refusal = ClientAccess.forbidden(request.kind, address: address, for: principal) {
                return refuse(refusal)
            }
            if sender != 0, containment.hasSuspensions, request.kind == .event || request.kind == .echo,
               let refusal = containment.suspension(of: sender, address: address) {
                return refuse(refusal)
            }
            // A keyed event's key is read here, not only by the worker: the driver binds it to
            // the client's key on the way (``MessageView/append(to:correlation:trace:sender:)``),
            // and the worker takes bound ids longer than a client may send.
            if request.kind == .event, request.header.flags.contains(.keyed) {
                do {
                    try IdempotencyKey.check(request.payloadBytes, correlation: correlation)
                } catch {
                    return refuse(error)
                }
            }
            // Only a key's events may witness a crash (`+Poison.swift`): nothing is read of others.
            let eventCase = sender != 0 && request.kind == .event
                ? RequestCase.name(of: RequestCase.unkeyed(request.payloadBytes, flags: request.header.flags),
                                   binary: request.header.flags.contains(.binary)) : nil
            switch route(from: identity, correlation: correlation, address: address, spawns: request.kind == .event,
                         bytes: request.addressBytes.count + request.payloadCount, readsSlowly: backlog.messages > 0,
                         sender: sender, eventCase: eventCase) {
            case .success(let (worker, id)): return .forward(worker: worker, id: id)
            case .failure(let error): return refuse(error)
            }
        case .list:
            if case .trusted? = principal {} else if let refusal = ClientAccess.forbidden(.list, address: nil, for: principal) {
                return refuse(refusal)
            }
            var page: ListRequest?
            if request.payloadCount > 0 {
                do {
                    page = try WireJSON.decode(ListRequest.self, from: Array(request.payloadBytes), code: .malformedJSON, what: "the list request")
                } catch {
                    return refuse(error)
                }
            }
            guard let payload = page == nil ? listingPayload() : try? WireJSON.encode(listing(page: page)) else { return .act([]) }
            return .act([.toClient(identity, WireMessage(Header(.listing, correlation: correlation), payload: payload))])
        case .deadLetters:
            return routeDeadLetters(from: identity, request, as: principal)
        case .poison:
            return .act(poison(from: identity, request, as: principal))
        case .snapshot:
            return .act([.toClient(identity, snapshot(request, as: principal))])
        case .batch:
            return refuse(WireError(.unknownKind, "a batch does not nest in a batch: put the requests of both in one batch"))
        case .locate:
            return .act([.toClient(identity, locate(request, as: principal))])
        case .state, .accepted, .error, .listing, .deadLetterList, .states, .poisonList, .location, .register, .welcome, .heartbeat, .observe,
             .instances, .quarantine, .release, .returned, .access, .placement, .ioRequest, .ioResult, .ioCancel, .ioCancelled, .stateChanged, .effect, .worker, .output, .machine:
            return refuseKind(request.kind)
        }
    }

    /// Routes a client request (event, get, cancel, stop, restart or echo) for `address`: the worker it
    /// goes to (by number) and the id it travels under, now pending; or why it is refused.
    /// - Parameters:
    ///   - spawns: Whether the request spawns a keyed instance (an event does; get, stop,
    ///     restart and cancel do not, so they are not listed as instances).
    ///   - bytes: The request's address and payload bytes.
    ///   - readsSlowly: Whether replies to this client wait unread (``workerBusy(_:adding:address:readsSlowly:)``).
    ///   - sender: The client's key, numbered (0: none).
    ///   - eventCase: The event's case (``RequestCase``), read for a key's events only.
    mutating func route(from identity: [UInt8], correlation: UInt64, address: String, spawns: Bool, bytes: Int = 0,
                        readsSlowly: Bool = false, sender: UInt32 = 0,
                        eventCase: String? = nil) -> Result<(worker: Int, id: UInt64), WireError> {
        let worker: Int
        if !handoff.releasesNone, let refusal = handoffRefusal(address) { return .failure(refusal) }
        if resolvedAt != registrations {
            resolved.removeAll(keepingCapacity: true)
            resolvedBytes = 0
            resolvedAt = registrations
        }
        if let known = resolved[address] {
            worker = known.worker
            if spawns, !known.listed {
                if case .refused(let refusal) = admitInstance(address) {
                    counts.busy += 1
                    return .failure(refusal)
                }
                resolved[address]?.listed = true
            }
        } else {
            do {
                worker = try resolveNumber(address)
            } catch {
                return .failure(error)
            }
            // Only events list a keyed instance (gets, stops, cancels and echoes do not spawn
            // one), and only within limits.instancesPerMachine.
            let admission = spawns ? admitInstance(address) : .known
            switch admission {
            case .listedNow:
                // A key's first event is not cached: with a stream of fresh keys most are
                // never addressed again, and caching each cost an insertion, and every
                // 100,000 of them emptied the cache of the live keys too. Its next event finds
                // it listed, and caches it.
                break
            case .known:
                remember(address, worker: worker, listed: spawns)
            case .refused(let refusal):
                remember(address, worker: worker, listed: false)
                counts.busy += 1
                return .failure(refusal)
            }
        }
        if let refusal = workerBusy(worker, adding: bytes, address: address, readsSlowly: readsSlowly) {
            counts.busy += 1
            return .failure(refusal)
        }
        if !handoff.isIdle { noteHost(address, worker: worker) }
        let id = takeID()
        track(id, Pending(origin: .client(identity, correlation), worker: worker, address: address, bytes: bytes, sender: sender,
                          eventCase: eventCase))
        return .success((worker, id))
    }

    /// Caches where `address` goes (``resolved``), and whether it is listed.
    mutating func remember(_ address: String, worker: Int, listed: Bool) {
        // A cache, not a registry: bounded in entries and bytes, however many addresses
        // clients try.
        if resolved.count >= 100_000 || resolvedBytes >= resolvedBytesLimit {
            // Its capacity kept (a few MiB at 100,000 entries; the addresses' bytes go):
            // with a stream of fresh keys, growing it again from nothing rehashed every
            // entry at each doubling.
            resolved.removeAll(keepingCapacity: true)
            resolvedBytes = 0
        }
        resolved[address] = (worker, listed)
        resolvedBytes += address.utf8.count
    }

    /// Remembers a request forwarded under `id` until its worker answers or is lost.
    mutating func track(_ id: UInt64, _ request: consuming Pending) {
        let worker = request.worker
        let bytes = request.bytes
        pending.insert(request, for: id)
        counts.routed += 1
        inFlight[worker] += 1
        inFlightBytes[worker] += bytes
    }

    /// The number of a worker instance the topology names (every name `resolve` returns is one).
    func number(of worker: String) -> Int {
        guard let number = workerNumbers[worker] else {
            preconditionFailure("worker \(worker) is not an instance of topology \(topology.name)")
        }
        return number
    }

    mutating func noteInstance(_ address: String) {
        let parsed = MachineAddress(address)
        guard parsed.isInstance else { return }
        keyedInstances.insert(address, of: parsed.machine)
    }

    /// The encoded ``listing(page:)`` of the first page, built again only when what it shows
    /// changed: a worker registered or was lost (``registrations``, which also counts the pid it
    /// registered with) or a keyed instance came or went (``InstanceBook/generation``). Until
    /// then each `list` costs a copy of the bytes, however many instances there are: a client
    /// asking in a loop walked every instance and encoded the result per request, and with
    /// 10,000 instances held the coordinator's loop for 20 s (debug build).
    mutating func listingPayload() -> [UInt8]? {
        if let cache = listingCache, cache.registrations == registrations, cache.instances == keyedInstances.generation {
            return cache.payload
        }
        guard let payload = try? WireJSON.encode(listing()) else { return nil }
        listingCache = (registrations, keyedInstances.generation, payload)
        return payload
    }

    /// The topology's machines and workers, each keyed machine with at most
    /// ``ListRequest/pageSize`` of its instances: the first ones in byte order, or with `page`
    /// only that machine's, after `page.after`.
    func listing(page: ListRequest? = nil) -> Listing {
        func shown(_ instances: AddressSet?, of name: String) -> [String] {
            guard let instances, page == nil || page?.machine == name else { return [] }
            let after = page?.after
            // The first page in byte order without sorting them all: kept short as it goes,
            // and once a page is kept, an address not before its last is passed over with one
            // comparison (a `list` walked a million addresses with a sort every page of them,
            // holding the coordinator's loop for half a second).
            var kept: [String] = []
            var cutoff: String?
            for address in instances {
                if let after, !AddressOrder.precedes(after, address) { continue }
                if let cutoff, !AddressOrder.precedes(address, cutoff) { continue }
                kept.append(address)
                if kept.count >= 2 * ListRequest.pageSize {
                    kept.sort(by: AddressOrder.precedes)
                    kept.removeLast(kept.count - ListRequest.pageSize)
                    cutoff = kept.last
                }
            }
            kept.sort(by: AddressOrder.precedes)
            return Array(kept.prefix(ListRequest.pageSize))
        }
        let machines = topology.machines.map { spec in
            let worker = spec.keyed ? spec.worker : (topology.placement(ofMachine: spec.name, key: nil) ?? spec.worker)
            // A single machine lives on one instance; a keyed one on any instance of its group.
            let available = spec.keyed
                ? topology.instances(of: spec.worker).contains { workers[$0]?.registered == true }
                : workers[worker]?.registered == true
            return Listing.Machine(name: spec.name, type: spec.type, keyed: spec.keyed, worker: worker,
                                   instances: shown(keyedInstances[spec.name], of: spec.name),
                                   instanceCount: keyedInstances[spec.name]?.count ?? 0, available: available)
        }
        let slots = workers
        let workerList = topology.workerInstances.map { instance in
            Listing.Worker(name: instance.name, group: instance.group,
                           registered: slots[instance.name]?.registered ?? false, pid: slots[instance.name]?.pid)
        }
        return Listing(topology: topology.name, coordinatorPid: getpid(), events: eventsEndpoint, workersEndpoint: workersEndpoint, machines: machines, workers: workerList)
    }
}
