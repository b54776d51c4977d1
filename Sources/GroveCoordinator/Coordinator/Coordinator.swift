public import Foundation
public import GroveCluster
@_spi(GroveInternal) import GroveWire
public import Logging
import Synchronization
package import ZeroMQ

/// The coordinator: binds the clients ROUTER, the workers ROUTER and the events PUB of a
/// topology and routes between them on one I/O thread. `fsm-launch` runs one; embed one the same
/// way to run a topology inside your own process.
public final class Coordinator: Sendable {
    /// The endpoints actually bound (a `tcp://host:*` port resolved to the real one).
    public let endpoints: Topology.Endpoints
    /// The clients endpoint as clients on this host should connect to it (wildcard → `127.0.0.1`).
    public let clientsConnectEndpoint: String
    /// The workers endpoint as workers on this host should connect to it (wildcard → `127.0.0.1`).
    public let workersConnectEndpoint: String
    /// Where `GET /metrics` answers, as bound (`http://127.0.0.1:9464/metrics`); `nil` without
    /// `metrics.listen` in the topology.
    public let metricsURL: String?
    private let loop: IOLoop
    private let driver: CoordinatorDriver

    /// The messages ZeroMQ queues for one client (its send high-water mark) before the rest
    /// wait in the coordinator's outbox for it. As many as `Client` and fsm-load keep in flight,
    /// so a client that reads its replies never needs the outbox: at 100 one event per message
    /// was a third slower (docs/BENCHMARKS.md, issue 34). ZeroMQ counts messages, not bytes: the
    /// replies over ``CoordinatorCore/smallReply`` among them are counted in bytes with the
    /// outbox (`HeldBytes`), so what a client that stops reading holds here is at most 1,000
    /// small replies beside `queues.clientOutboxBytes`.
    static let clientSocketQueue = 1000

    /// The smallest `ZMQ_MAXMSGSIZE` set on an endpoint: libzmq checks the handshake's commands
    /// (a CURVE `INITIATE` is a few hundred bytes) against it too.
    static let smallestFrameLimit = 1024

    /// What CURVE adds to each frame on the wire, which is what libzmq checks against
    /// `ZMQ_MAXMSGSIZE`: the `MESSAGE` command's name (8 bytes), its nonce (8), the box's
    /// authenticator (16) and the flags byte inside it.
    static let curveFrameOverhead = 33

    /// The coordinator's public key, which clients and workers need to connect; `nil` when the
    /// topology does not use CURVE.
    package let publicKey: CurveKey?
    /// The socket files of its `ipc://` endpoints, removed by ``stop()``.
    private let socketFiles: BoundSocketFiles

    /// Binds the topology's three endpoints, after reading the key files its `security` names
    /// and making ready (or refusing) the directories of its ipc sockets: see
    /// ``prepareLocalEndpoints(of:environment:uid:)``.
    /// - Parameters:
    ///   - topology: The topology to run.
    ///   - directory: Where relative key file paths start: the topology file's folder
    ///     (`nil`: the working directory).
    ///   - logger: Where the coordinator logs.
    /// - Throws: ``CoordinatorError`` naming the key file or endpoint that could not be used and why.
    public init(topology: Topology, keysRelativeTo directory: URL? = nil,
                logger: Logger = Logger(label: "grove.coordinator")) throws(CoordinatorError) {
        let keys = try ClusterKeys(topology: topology, relativeTo: directory)
        publicKey = keys.coordinator?.publicKey
        try Self.prepareLocalEndpoints(of: topology)
        let context: ZMQContext
        let sockets: (clients: Socket, workers: Socket, events: Socket)
        let zap: Socket
        do {
            context = try ZMQContext()
            // The ZAP handler (RFC 27) is bound before any endpoint, so no connection is ever
            // admitted unasked: every endpoint names a domain, so libzmq asks about each.
            zap = try Socket(context, .router)
            try zap.setLinger(milliseconds: 0)
            try zap.bind("inproc://zeromq.zap.01")
            sockets = (try Socket(context, .router), try Socket(context, .router), try Socket(context, .xpub))
            // Sizes before work: ZeroMQ drops a peer that sends a larger frame than these as it
            // reads the frame's length, before it allocates it (docs/SECURITY.md, "Bounds before
            // work"). It checks frames as they come, CURVE's box included, and the handshake's
            // commands too: hence the overhead, and never under 1 KiB.
            let limits = topology.limits
            func frameLimit(_ bytes: Int) -> Int64 { Int64(max(bytes + Self.curveFrameOverhead, Self.smallestFrameLimit)) }
            for router in [sockets.clients, sockets.workers] {
                try router.setRouterMandatory(true)
                try router.setLinger(milliseconds: 0)
                try router.setMaxMessageSize(frameLimit(limits.messageBytes))
                // A message is a routing id and three frames: a few more are read, to say how
                // many there were, and the rest dropped unread.
                router.maximumFrames = 8
            }
            // A watcher sends subscriptions, one frame each: a SUBSCRIBE command or a flag byte,
            // and a topic prefix.
            try sockets.events.setMaxMessageSize(frameLimit(limits.subscriptionFrameBytes))
            sockets.events.maximumFrames = 2
            for (socket, endpoint) in [(sockets.clients, Gatekeeper.Endpoint.clients), (sockets.workers, .workers), (sockets.events, .events)] {
                try socket.setZAPDomain(endpoint.rawValue)
                if let pair = keys.coordinator {
                    try socket.becomeCurveServer(secretKey: pair.secretKey)
                    // Each message then says whose key sent it: roles and registrations are checked
                    // on it, and subscriptions counted against the watcher's key.
                    socket.readsUserID = true
                }
            }
            // Another connection under a registered worker's name takes the name over only where
            // every peer is trusted. With keys, a connection with another key must not displace
            // it; a stale connection is dropped by the ZMTP heartbeat below instead.
            try sockets.workers.setRouterHandover(!topology.security.usesCurve)
            // Replies a client has not taken wait in the driver's outbox, where they are counted in
            // messages and bytes (`queues.clientOutbox`, `queues.clientOutboxBytes`). ZeroMQ's own
            // queue in front of each client counts only messages: the large ones in it are counted
            // in bytes with the outbox until ZeroMQ has written them (`HeldBytes`).
            try sockets.clients.setSendHighWaterMark(Int32(clamping: min(Self.clientSocketQueue, topology.queues.clientOutbox)))
            sockets.clients.heldBytes = HeldBytes(threshold: CoordinatorCore.smallReply)
            // What clients send waits in their own queues rather than here: a client flooding
            // batches is slowed down by ZeroMQ instead of filling the coordinator's memory.
            try sockets.clients.setReceiveHighWaterMark(Int32(clamping: min(1000, topology.queues.clientOutbox)))
            try sockets.workers.setSendHighWaterMark(Int32(clamping: topology.queues.workerOutbox))
            try sockets.workers.setReceiveHighWaterMark(Int32(clamping: topology.queues.workerOutbox))
            try sockets.workers.setHeartbeat(interval: Int32(clamping: topology.heartbeat.intervalMs),
                                             timeout: Int32(clamping: topology.heartbeat.timeoutMs),
                                             ttl: Int32(clamping: topology.heartbeat.timeoutMs * 2))
            try sockets.events.setLinger(milliseconds: 0)
            // A watcher that falls this far behind loses publications (numbered, so it can tell);
            // counted so that what waits for it is bounded in bytes (`Topology+Watchers.swift`).
            try sockets.events.setSendHighWaterMark(Int32(clamping: topology.watcherQueueMessages))
        } catch {
            throw CoordinatorError("could not create the coordinator's sockets: \(error)")
        }
        var bound: [String] = []
        for (socket, endpoint, role) in [(sockets.clients, topology.coordinator.clients, "clients"),
                                         (sockets.workers, topology.coordinator.workers, "workers"),
                                         (sockets.events, topology.coordinator.events, "events")] {
            do {
                try socket.bind(endpoint)
                bound.append(socket.lastEndpoint)
            } catch {
                let hint = error.errno == EADDRINUSE
                    ? "it is in use: is another fsm-launch running this topology? Stop it or change coordinator.\(role)"
                    : "check coordinator.\(role) in the topology"
                throw CoordinatorError("cannot bind the \(role) endpoint \(endpoint): \(error.message); \(hint)")
            }
        }
        // The metrics endpoint: raw TCP on a STREAM socket (docs/ARCHITECTURE.md, "Metrics").
        var metricsSocket: Socket?
        if let endpoint = topology.metrics.bindEndpoint {
            do {
                let socket = try Socket(context, .stream)
                try socket.setLinger(milliseconds: 0)
                // An answer its client does not read is dropped (the connection reset) after
                // this long, not kept in libzmq's memory for as long as the client stays.
                try socket.setTCPMaximumRetransmit(milliseconds: Int32(ScrapeConnections.deadline.components.seconds * 1000))
                socket.maximumFrames = 2
                try socket.bind(endpoint)
                metricsSocket = socket
            } catch {
                let hint = error.errno == EADDRINUSE
                    ? "the port is in use: choose another in metrics.listen, or 0 for a free one"
                    : "check metrics.listen in the topology"
                throw CoordinatorError("cannot bind the metrics endpoint \(topology.metrics.listen ?? endpoint): \(error.message); \(hint)")
            }
        }
        metricsURL = metricsSocket.map { "http://" + $0.lastEndpoint.dropFirst("tcp://".count) + "/metrics" }
        endpoints = Topology.Endpoints(clients: bound[0], workers: bound[1], events: bound[2])
        socketFiles = BoundSocketFiles(bound)
        // Bound on every interface (tcp://0.0.0.0:…): peers on this host connect to 127.0.0.1.
        clientsConnectEndpoint = ClientEndpoint.connectable(bound[0], via: bound[0])
        workersConnectEndpoint = ClientEndpoint.connectable(bound[1], via: bound[1])
        do {
            loop = try IOLoop(name: "grove-coordinator-io", tickInterval: .milliseconds(max(10, topology.heartbeat.intervalMs / 5)))
        } catch {
            throw CoordinatorError("could not start the coordinator's I/O thread: \(error)")
        }
        let ids = (clients: loop.add(sockets.clients), workers: loop.add(sockets.workers), events: loop.add(sockets.events))
        driver = CoordinatorDriver(
            core: CoordinatorCore(topology: topology, eventsEndpoint: bound[2], workersEndpoint: bound[1], epoch: .random(), publicationEpoch: .random()),
            clients: ids.clients, workers: ids.workers, events: ids.events, context: context, log: logger)
        driver.zap = loop.add(zap)
        if let metricsSocket {
            driver.metricsSocket = loop.add(metricsSocket)
            driver.metrics = CoordinatorMetrics()
        }
        driver.usesCurve = topology.security.usesCurve
        driver.gatekeeper = Gatekeeper(topology: topology, workerKeys: keys.workers, clientKeys: keys.clients, uid: getuid())
        // The same keys and grants, for the `access` table of workers serving direct routes
        // (none is registered yet: nothing to send).
        var grants: [String: [Topology.ClientGrant]] = [:]
        for (grant, key) in zip(topology.security.clients, keys.clients) { grants[key.z85, default: []].append(grant) }
        _ = driver.withCore { $0.admitClients(grants.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }) }
    }

    /// Admits `key` as the key of a worker process of `group` (one `fsm-launch` starts with a
    /// pair it made), until ``forgetWorkerKey(_:)``.
    package func admitWorkerKey(_ key: CurveKey, group: String) {
        let driver = driver
        loop.execute { _ in driver.gatekeeper.admit(worker: key, group: group) }
    }

    /// Admits `key` as a client with `grants` (the key of fsm-launch's live view, which speaks
    /// to the coordinator as a client), for as long as the coordinator runs.
    package func admitClientKey(_ key: CurveKey, grants: [Topology.ClientGrant]) {
        let driver = driver
        loop.execute { io in
            driver.gatekeeper.admit(client: key, grants: grants)
            driver.apply(driver.withCore { $0.admitClients([(key.z85, grants)]) }, io: io)
            driver.flush(io: io)
        }
    }

    /// Serves a scrape of the metrics endpoint only when `check` finds its `Authorization`
    /// header good (fsm-launch's check of the tokens the topology's client keys make, when
    /// `metrics.requireToken`); set before the first scrape can come, or a scrape is served
    /// without it.
    package func requireScrapeTokens(_ check: @escaping MetricsHTTP.Authorizer) {
        let driver = driver
        loop.execute { _ in driver.scrapeAuthorizer = check }
    }

    /// Stops admitting a key ``admitWorkerKey(_:group:)`` admitted.
    package func forgetWorkerKey(_ key: CurveKey) {
        let driver = driver
        loop.execute { _ in driver.gatekeeper.forget(worker: key) }
    }

    /// Calls `done` on the coordinator's I/O thread with the metrics' text as a scrape of
    /// `metrics.listen` gets it (fsm-launch's live view plots it), or nil without metrics.
    /// Nothing is called once the coordinator stopped.
    package func metricsText(_ done: @escaping @Sendable ([UInt8]?) -> Void) {
        let driver = driver
        loop.execute { io in done(driver.metrics == nil ? nil : driver.renderedMetrics(now: io.now)) }
    }

    /// Counts a restart of worker instance `worker`'s process (`fsm-launch`'s supervisor), in
    /// `grove_worker_restarts_total`; nothing without metrics.
    package func noteWorkerRestart(_ worker: String) {
        let driver = driver
        loop.execute { _ in driver.metrics?.noteRestart(worker: worker) }
    }

    /// Starts routing.
    public func start() { loop.start(driver) }

    /// `true` once every worker of the topology has registered.
    public var allWorkersRegistered: Bool { driver.ready.withLock { $0.all } }

    /// The workers that have not registered yet.
    public var workersNotRegistered: [String] { driver.ready.withLock { $0.missing } }

    /// Tells the coordinator a worker process ended, so its effects and requests fail at once
    /// instead of after the heartbeat timeout.
    public func workerExited(_ name: String, reason: String) {
        let driver = driver
        loop.execute { io in
            driver.apply(driver.withCore { $0.lose(name, reason: reason, cause: .exited) }, io: io)
            driver.flush(io: io)
        }
    }

    /// Calls `watcher` on the I/O thread for every worker declared lost, with why. Set it before
    /// ``start()``; `fsm-launch` kills a worker of its own that went silent or unreachable.
    package func watchLosses(_ watcher: @escaping @Sendable (String, Int32?, WorkerLoss) -> Void) {
        driver.lossWatcher.set { loss in watcher(loss.worker, loss.pid, loss.cause) }
    }

    /// Calls `watcher` on the I/O thread for every exit of a worker's process that was caused
    /// by input now quarantined or suspended, with why: `fsm-launch` no longer counts it toward
    /// the group's supervision intensity. Set it before ``start()``.
    package func watchCrashes(_ watcher: @escaping @Sendable (_ worker: String, _ pid: Int32, _ reason: String) -> Void) {
        driver.crashWatcher.set { crash in watcher(crash.worker, crash.pid, crash.reason) }
    }

    /// ``workerExited(_:reason:)`` for process `pid`, which its launcher saw end: `blamesEvent`
    /// false when it was killed from outside (SIGKILL or SIGTERM from another process), which
    /// lands in an innocent event: the crash its next process reports is then not counted
    /// against it. Its incarnation is retired: a registration it sent before it ended, read
    /// late, is refused rather than taken for a live process.
    package func workerExited(_ name: String, pid: Int32, reason: String, blamesEvent: Bool) {
        let driver = driver
        loop.execute { io in
            driver.withCore { $0.noteExit(of: name, pid: pid, blamesEvent: blamesEvent) }
            driver.apply(driver.withCore { $0.lose(name, reason: reason, cause: .exited) }, io: io)
            driver.flush(io: io)
        }
    }

    /// Stops routing, closes the sockets and removes the socket files it bound.
    public func stop() {
        loop.stop()
        socketFiles.remove()
    }

}

/// Why a coordinator could not start.
public struct CoordinatorError: Error, CustomStringConvertible {
    public var message: String
    init(_ message: String) { self.message = message }
    public var description: String { message }
}
