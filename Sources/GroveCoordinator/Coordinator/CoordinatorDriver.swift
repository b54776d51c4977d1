import Foundation
import Glibc
import GroveCluster
@_spi(GroveInternal) import GroveWire
import Logging
import Synchronization
import ZeroMQ

/// Runs ``CoordinatorCore`` on the I/O thread and executes its actions. Touched only on that
/// thread, except `ready`. The unit tests run it, unchanged, on an `EmbeddedLoop`
/// (`Tests/GroveClusterTests/Support/InMemoryCluster.swift`).
final class CoordinatorDriver: IOLoopDelegate, @unchecked Sendable {
    struct Readiness {
        var all = false
        var missing: [String] = []
    }

    // What the hot path reads and writes per message is `@exclusivity(unchecked)`: the runtime's
    // per-access bookkeeping cost time on every envelope. Safe because nothing re-enters the
    // driver while one is being modified: the closures `toWorker`, `toClient` and `withCore` run
    // inside a modification touch only their argument. Such an overlap would no longer trap.
    @exclusivity(unchecked) var core: CoordinatorCore
    let clients: SocketID
    let workers: SocketID
    let events: SocketID
    /// Kept alive as long as the sockets; `nil` on an `EmbeddedLoop`, which has none.
    let context: ZMQContext?
    let log: Logger
    let ready = Mutex(Readiness())
    /// The ZAP handler's socket and decisions; set before the loop starts.
    var zap: SocketID = -1
    var gatekeeper = Gatekeeper(uid: getuid())
    /// Whether the topology speaks CURVE: then every message must carry a known key's user id.
    var usesCurve = false
    /// Told of every worker declared lost, on the I/O thread; set before the loop starts.
    let lossWatcher = CallbackSlot<(worker: String, pid: Int32?, cause: WorkerLoss)>()
    /// Told of every worker exit that no longer counts toward escalation, its crash caused by
    /// input now quarantined or suspended (``CoordinatorAction/forgive(worker:pid:reason:)``).
    let crashWatcher = CallbackSlot<(worker: String, pid: Int32, reason: String)>()
    private var seenRegistrations = 0
    /// The metrics endpoint's STREAM socket and what the metrics hold; `-1` and `nil` unless
    /// the topology has `metrics.listen` (`CoordinatorDriver+Metrics.swift`).
    var metricsSocket: SocketID = -1
    var metrics: CoordinatorMetrics?
    /// The check of each scrape's token, when the topology asks for one (`metrics.requireToken`).
    var scrapeAuthorizer: MetricsHTTP.Authorizer?
    /// The metrics endpoint's open connections and what each sent so far.
    var scrapes = ScrapeConnections()
    /// The last rendering of the metrics and when (`CoordinatorDriver+Metrics.swift`).
    var lastRendering: (at: ContinuousClock.Instant, text: [UInt8])?
    /// The metrics warnings logged so far (`CoordinatorDriver+Metrics.swift`).
    var metricsWarned: Set<String> = []
    /// The process's tracer, read once here; `nil` (no tracer bootstrapped) keeps tracing to
    /// one test of this constant per forwarded request (`CoordinatorDriver+Tracing.swift`).
    let tracing: WireTracing?

    init(core: CoordinatorCore, clients: SocketID, workers: SocketID, events: SocketID, context: ZMQContext?, log: Logger,
         tracing: WireTracing? = nil) {
        self.tracing = tracing ?? WireTracing.bootstrapped(log: log)
        self.core = core
        self.clients = clients
        self.workers = workers
        self.events = events
        self.context = context
        self.log = log
        toWorkers = Array(repeating: BatchBuilder(), count: core.workerNames.count)
        toWorkerEnvelopes = max(1, core.topology.limits.batchEnvelopes)
        ready.withLock { $0.missing = core.unregistered }
    }

    func withCore<T>(_ body: (inout CoordinatorCore) -> T) -> T { body(&core) }

    func received(_ batch: [Inbound], io: LoopIO) {
        // Busies owed are offered when a client's outbox shrank (`drained`) and at ticks, not
        // after every batch: a client that reads nothing costs no work per turn.
        defer { flush(io: io) }
        for inbound in batch {
            guard let identity = inbound.frames.first else { continue }
            let rest = inbound.frames.dropFirst()
            if inbound.socket == clients {
                // What already waits for this client: one with too much is owed a busy per request.
                let waiting = self.backlog(of: identity, io: io)
                // Who the client's key proved it is; without CURVE every admitted client is trusted.
                let principal = principal(of: inbound, on: .clients)
                // Its key, numbered, for the crashes its events may cause; 0 without CURVE.
                let sender = usesCurve ? inbound.userID.map { core.containment.number(ofSender: $0) } ?? 0 : 0
                if rest.count == 3, inbound.frameCount == 4, let header = try? Header(rest[rest.startIndex]) {
                    noteRefusedSize(header, address: rest[rest.startIndex + 1], payload: rest[rest.startIndex + 2])
                    if header.kind == .batch {
                        forward(rest[rest.startIndex + 2], count: header.correlation, addressCount: rest[rest.startIndex + 1].count,
                                fromClient: identity, as: principal,
                                backlog: waiting, sender: sender, io: io)
                    } else {
                        MessageView.with(header, address: rest[rest.startIndex + 1], payload: rest[rest.startIndex + 2]) {
                            forward($0, fromClient: identity, as: principal, backlog: waiting, sender: sender, io: io)
                        }
                    }
                    continue
                }
                // Not a message (frames missing, a bad header): the core says what is wrong.
                apply(core.fromClient(identity, rest, frameCount: inbound.frameCount - 1), io: io)
            } else if inbound.socket == workers {
                if rest.count == 3, inbound.frameCount == 4, let header = try? Header(rest[rest.startIndex]), header.kind != .register {
                    if header.kind == .batch {
                        forward(rest[rest.startIndex + 2], count: header.correlation, addressCount: rest[rest.startIndex + 1].count,
                                fromWorker: identity, userID: inbound.userID, io: io)
                    } else {
                        MessageView.with(header, address: rest[rest.startIndex + 1], payload: rest[rest.startIndex + 2]) {
                            forward($0, fromWorker: identity, userID: inbound.userID, io: io)
                        }
                    }
                    continue
                }
                // A registration, or not a message: the core's general path.
                let principal = principal(of: inbound, on: .workers)
                apply(core.fromWorker(identity, rest, now: io.now, principal: principal, peer: inbound.userID,
                                      frameCount: inbound.frameCount - 1), io: io)
            } else if inbound.socket == events {
                noteClosedSubscription(identity, from: inbound.userID)
                apply(core.subscription(identity, from: inbound.userID), io: io)
            } else if inbound.socket == zap {
                answer(zapRequest: inbound.frames, io: io)
            } else if inbound.socket == metricsSocket {
                serveMetrics(inbound.frames, io: io)
            }
        }
    }

    /// Who sent `inbound`: without CURVE every admitted peer is trusted; with it, only the key
    /// its `User-Id` names, and a message without one is no one (refused, never trusted).
    private func principal(of inbound: Inbound, on endpoint: Gatekeeper.Endpoint) -> Gatekeeper.Principal? {
        guard usesCurve else { return .trusted }
        return inbound.userID.flatMap { gatekeeper.principal(userID: $0, on: endpoint) }
    }

    /// libzmq asks whether a connection may proceed (RFC 27): `[peer, "", request...]`.
    private func answer(zapRequest frames: [[UInt8]], io: LoopIO) {
        guard frames.count >= 3, frames[1].isEmpty else { return }
        let answer = gatekeeper.answer(Array(frames[2...]))
        if let refusal = answer.refusal { log.warning("\(refusal)") }
        io.send(zap, [frames[0], []] + answer.frames)
    }

    func sendFailed(_ socket: SocketID, frames: [[UInt8]], error: ZMQError, io: LoopIO) {
        guard let peer = frames.first else { return }
        if socket == metricsSocket {
            // A scraper that went away before its answer: its ids are the STREAM socket's own,
            // which may equal a client's on the clients socket, so nothing of the clients is touched.
            scrapes.lost(peer: peer)
            return
        }
        if socket == workers {
            // A connection that is no registered process's (a refused one) is no loss.
            guard let worker = core.connections[peer]?.worker else { return }
            let name = core.workerNames[worker]
            log.warning("worker unreachable", metadata: ["worker": "\(name)", "error": "\(error)"])
            apply(core.lose(name, reason: "unreachable: \(error.message)", cause: .unreachable), io: io)
            flush(io: io)
        } else {
            log.debug("client went away before its reply", metadata: ["error": "\(error)"])
            // A client that is gone is owed nothing more (a new connection gets a new id), and
            // what waited for it is freed: given back to the system at the next tick.
            core.forget(client: peer)
            releasedBytes += frames.reduce(0) { $0 + $1.count }
        }
    }

    func tick(io: LoopIO) {
        apply(core.tick(now: io.now), io: io)
        expireScrapes(io: io)
        releaseBusies(io: io)
        flush(io: io)
        if releasedBytes >= 1 << 20 {
            // What a slow client's queue held went back to malloc; without this glibc keeps it.
            releasedBytes = 0
            _ = Self.trimMalloc?(0)
        }
    }

    func posted(_ messages: [Outbound], io: LoopIO) {}

    func flush(io: LoopIO) {
        for worker in toWorkers.indices where !toWorkers[worker].isEmpty {
            send(toWorkers[worker], toWorker: worker, io: io)
            // libzmq copied the batch: its buffer is the builder's alone again and is reused
            // (freeing and allocating one per turn cost more than the routing). A big one is
            // let go, so an idle worker's batch holds at most about 256 KiB.
            if toWorkers[worker].byteCount <= 1 << 18 {
                toWorkers[worker].removeAll()
            } else {
                toWorkers[worker] = BatchBuilder(reservingCapacity: 1 << 18)
            }
        }
        for (identity, batch) in toClients where !batch.isEmpty {
            io.send(clients, [identity] + batch.frames())
        }
        toClients.removeAll(keepingCapacity: true)
    }

    /// Envelopes for each worker (by number) and each batching client, collected during one
    /// callback and sent as one batch per destination by ``flush(io:)``: under load one ZeroMQ
    /// message carries many envelopes.
    @exclusivity(unchecked) var toWorkers: [BatchBuilder]
    /// The most envelopes a batch to a worker holds (`limits.batchEnvelopes`, which the worker
    /// checks): read once, not from the topology at every envelope.
    let toWorkerEnvelopes: Int
    @exclusivity(unchecked) var toClients: [[UInt8]: BatchBuilder] = [:]
    /// Bytes freed by clients that went away, or by large messages refused, since the last trim.
    var releasedBytes = 0
    /// glibc's `malloc_trim`, which its module map does not export (`malloc.h`): found once.
    private static let trimMalloc: (@convention(c) (Int) -> Int32)? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (Int) -> Int32).self)
    }()

    /// Adds to the batch for worker number `worker`; a batch that reached its preferred size
    /// leaves now.
    func toWorker(_ worker: Int, io: LoopIO, _ append: (inout BatchBuilder) -> Void) {
        append(&toWorkers[worker])
        // Cut at the bound the worker checks too (limits.batchEnvelopes): a turn that forwards
        // many clients' batches to one worker sends it several.
        if toWorkers[worker].byteCount >= BatchBuilder.preferredByteCount || toWorkers[worker].count >= toWorkerEnvelopes {
            // To the connection its registered process registered from; nowhere without one.
            if let identity = core.routingIDs[worker] { io.send(workers, [identity] + toWorkers[worker].frames()) }
            toWorkers[worker] = BatchBuilder()
        }
    }

    /// Adds to the batch for a batching client; a batch that reached its preferred size leaves now.
    func toClient(_ identity: [UInt8], io: LoopIO, _ append: (inout BatchBuilder) -> Void) {
        let full = Self.appending(to: &toClients[identity, default: BatchBuilder()], append)
        if full {
            io.send(clients, [identity] + toClients.removeValue(forKey: identity)!.frames())
        }
    }

    /// Appends to `batch`; whether it reached its preferred size (one dictionary access for both).
    private static func appending(to batch: inout BatchBuilder, _ append: (inout BatchBuilder) -> Void) -> Bool {
        append(&batch)
        return batch.byteCount >= BatchBuilder.preferredByteCount
    }

    func apply(_ actions: [CoordinatorAction], io: LoopIO) {
        for action in actions {
            switch action {
            case .toClient(let identity, var message):
                let size = identity.count + Header.size + message.address.utf8.count + message.payload.count
                if size > CoordinatorCore.smallReply, let replacement = replacing(replyOf: size, kind: message.header.kind,
                        correlation: message.header.correlation, address: message.address.utf8, to: identity, io: io) {
                    message = replacement
                }
                if core.batchingClients.contains(identity) {
                    toClient(identity, io: io) { $0.append(message) }
                } else {
                    io.send(clients, [identity] + message.frames)
                }
            case .toWorker(let name, let message):
                // Every name the core sends to is an instance of the topology.
                if let worker = core.workerNumbers[name] { toWorker(worker, io: io) { $0.append(message) } }
            case .toPeer(let identity, let message):
                // A connection answered on its own (a registration, a stranger): no batch.
                io.send(workers, [identity] + message.frames)
            case .dropQueued(let peer):
                _ = io.dropPending(workers, peer: peer)
            case .publish(let topic, let message):
                // Numbered as it is sent, so the numbers follow the order on the socket.
                io.send(events, [Array(topic.utf8)] + core.publications.numbered(message, topic: topic).frames)
            case .lost(let worker, let cause, let pid):
                // What its connection still had waiting goes with `.dropQueued`.
                if let number = core.workerNumbers[worker] { toWorkers[number] = BatchBuilder() }
                lossWatcher.current?((worker, pid, cause))
            case .warn(let text):
                log.warning("\(text)")
            case .forgive(let worker, let pid, let reason):
                crashWatcher.current?((worker, pid, reason))
            case .resetWatchers(let key):
                resetWatchers(refusing: key)
            case .admitWatcher(let key):
                if let curve = CurveKey(z85: key) { gatekeeper.admit(watcher: curve) }
            case .workerMetrics(let worker, let report):
                noteMetrics(report, from: worker)
            }
        }
        guard core.registrations != seenRegistrations else { return }
        seenRegistrations = core.registrations
        let (all, missing) = (core.allRegistered, core.unregistered)
        ready.withLock { $0 = Readiness(all: all, missing: missing) }
    }
}
