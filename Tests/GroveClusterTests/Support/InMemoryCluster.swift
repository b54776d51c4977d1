@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
@_spi(GroveInternal) import GroveWire
import Logging
import Synchronization
import Tracing
import ZeroMQ

/// A coordinator in one test process with no sockets: the real ``CoordinatorDriver`` and
/// ``CoordinatorCore`` on an `EmbeddedLoop`, with the test playing its clients, its workers, its
/// events subscribers and its clock. Workers and clients here are scripts: the test writes the
/// protocol v1 messages they would send (`fromClient`, `fromWorker`, `register`) and reads what
/// the coordinator sent them (`toClient`, `toWorker`, `published`). Each call is one loop turn:
/// nothing moves in between, and time passes only in `advance(by:)`.
///
/// ```swift
/// let cluster = InMemoryCluster()
/// cluster.registerAll()
/// cluster.fromClient("c", .event("counter/1", correlation: 7))
/// let forwarded = cluster.toWorker("data-1").unbatched   // the event, under the coordinator's id
/// ```
final class InMemoryCluster {
    /// Two worker groups, `edge` (one instance, the single machine `auth`) and `data` (two
    /// instances, the keyed machine `counter`), with the shortest heartbeat a topology accepts
    /// (50/200 ms) and a client outbox of 4.
    static let topology = Topology(
        name: "in-memory",
        coordinator: .init(clients: "inproc://clients", workers: "inproc://workers", events: "inproc://events"),
        workers: [.init(name: "edge"), .init(name: "data", count: 2)],
        machines: [
            .init(name: "auth", type: "AuthFlow", worker: "edge"),
            .init(name: "counter", type: "Counter", worker: "data", keyed: true),
        ],
        heartbeat: .init(intervalMs: 50, timeoutMs: 200),
        queues: .init(mailboxCapacity: 64, workerOutbox: 100, clientOutbox: 4)
    )

    /// A worker declared lost, as the loss watcher (`fsm-launch`'s supervisor) is told.
    struct Loss: Equatable, Sendable, CustomStringConvertible {
        let worker: String
        let cause: WorkerLoss
        var description: String { "\(worker): \(cause)" }
    }

    let topology: Topology
    let loop: EmbeddedLoop
    let driver: CoordinatorDriver
    let clients: SocketID
    let workers: SocketID
    let events: SocketID
    private let lossLog = LossLog()
    private let warningLog: WarningLog
    /// What the coordinator sent and the test has not read yet, in send order.
    private var sent: [Outbound] = []

    /// - Parameter topology: The topology the coordinator routes by.
    /// - Parameter tracer: The coordinator's tracer (``WireTracing``); none by default.
    init(topology: Topology = InMemoryCluster.topology, tracer: (any Tracer)? = nil) {
        self.topology = topology
        // The coordinator's own tick cadence: a fifth of the heartbeat interval, at least 10 ms.
        loop = EmbeddedLoop(tickInterval: .milliseconds(max(10, topology.heartbeat.intervalMs / 5)))
        clients = loop.add(.router)
        workers = loop.add(.router)
        events = loop.add(.xpub)
        let warnings = WarningLog()
        warningLog = warnings
        var log = Logger(label: "grove.coordinator.in-memory") { _ in warnings }
        log.logLevel = .warning
        driver = CoordinatorDriver(
            core: CoordinatorCore(topology: topology, eventsEndpoint: topology.coordinator.events,
                                  workersEndpoint: topology.coordinator.workers),
            clients: clients, workers: workers, events: events, context: nil, log: log,
            tracing: tracer.map { WireTracing(tracer: $0, log: log) })
        let losses = lossLog
        driver.lossWatcher.set { loss in losses.entries.withLock { $0.append(Loss(worker: loss.worker, cause: loss.cause)) } }
        loop.start(driver)
    }

    // MARK: Clients

    /// One turn in which client `client` sent `message`.
    func fromClient(_ client: String, _ message: WireMessage) {
        fromClient(client, frames: message.frames)
    }

    /// One turn in which each client sent its message, in this order.
    func fromClients(_ messages: [(client: String, message: WireMessage)]) {
        loop.receive(messages.map { Inbound(socket: clients, frames: [Array($0.client.utf8)] + $0.message.frames) })
    }

    /// One turn in which client `client` sent these frames (after its routing id).
    func fromClient(_ client: String, frames: [[UInt8]]) {
        loop.receive([Inbound(socket: clients, frames: [Array(client.utf8)] + frames)])
    }

    /// One turn in which client `client` sent `messages` as one batch (even a batch of one).
    func fromClient(_ client: String, batch messages: [WireMessage]) {
        fromClient(client, frames: Self.batch(messages))
    }

    /// Takes what the coordinator sent client `client`, each a lone message or a batch.
    func toClient(_ client: String) -> [WireMessage] {
        take(on: clients, peer: client)
    }

    // MARK: Workers

    /// The registration worker `worker` sends: the machine types its group hosts.
    func registration(_ worker: String, pid: Int32 = 100) -> WireMessage {
        let group = topology.workerInstances.first { $0.name == worker }?.group
        let types = topology.machines.filter { $0.worker == group }.map(\.type)
        let payload = try! WireJSON.encode(Registration(worker: worker, pid: pid, machineTypes: types, ioHandlers: []))
        return WireMessage(Header(.register), address: worker, payload: payload)
    }

    /// One turn in which `worker` registered; returns what the coordinator answered it (a welcome
    /// and an observe, or a refusal).
    @discardableResult
    func register(_ worker: String, pid: Int32 = 100) -> [WireMessage] {
        fromWorker(worker, registration(worker, pid: pid))
        return toWorker(worker).unbatched
    }

    /// Registers every worker of the topology and reads away what each was told.
    func registerAll() {
        for instance in topology.workerInstances { register(instance.name) }
        _ = published()
    }

    /// One turn in which worker `worker` sent `message`.
    func fromWorker(_ worker: String, _ message: WireMessage) {
        loop.receive([Inbound(socket: workers, frames: [Array(worker.utf8)] + message.frames)])
    }

    /// One turn in which each worker sent its message, in this order.
    func fromWorkers(_ messages: [(worker: String, message: WireMessage)]) {
        loop.receive(messages.map { Inbound(socket: workers, frames: [Array($0.worker.utf8)] + $0.message.frames) })
    }

    /// One turn in which worker `worker` sent `messages` as one batch (even a batch of one).
    func fromWorker(_ worker: String, batch messages: [WireMessage]) {
        loop.receive([Inbound(socket: workers, frames: [Array(worker.utf8)] + Self.batch(messages))])
    }

    /// One turn in which each of `workers` sent a heartbeat.
    func heartbeats(from workers: [String]) {
        loop.receive(workers.map { Inbound(socket: self.workers, frames: [Array($0.utf8)] + WireMessage(Header(.heartbeat), address: $0).frames) })
    }

    /// Takes what the coordinator sent worker `worker`, each a lone message or a batch.
    func toWorker(_ worker: String) -> [WireMessage] {
        take(on: workers, peer: worker)
    }

    /// The requests worker `worker` was sent, batches unpacked, heartbeats and observes left out.
    func requests(to worker: String) -> [WireMessage] {
        toWorker(worker).unbatched.filter { $0.header.kind != .heartbeat && $0.header.kind != .observe }
    }

    /// A key of the keyed machine `counter` that the topology places on `worker`.
    func counterKey(on worker: String) -> String {
        (1...1000).lazy.map(String.init).first { topology.placement(ofMachine: "counter", key: $0) == worker }!
    }

    // MARK: Events, time, what was noticed

    /// Takes what the coordinator published on its events socket, with each message's topic.
    func published() -> [(topic: String, message: WireMessage)] {
        collect()
        var taken: [(String, WireMessage)] = []
        sent.removeAll { outbound in
            guard outbound.socket == events else { return false }
            taken.append((String(decoding: outbound.frames[0], as: UTF8.self), try! WireMessage(frames: outbound.frames.dropFirst())))
            return true
        }
        return taken
    }

    /// The `worker` events published, decoded.
    func workerEvents() -> [WorkerEvent] {
        published().filter { $0.message.header.kind == .worker }.map { try! WireJSON.decode(WorkerEvent.self, from: $0.message.payload) }
    }

    /// Moves the coordinator's clock by `duration`, ticking it on the way; each of
    /// `heartbeatsFrom` sends a heartbeat every heartbeat interval meanwhile, as a live worker does.
    func advance(by duration: Duration, heartbeatsFrom live: [String] = []) {
        guard !live.isEmpty else { return loop.advance(by: duration) }
        let interval = topology.heartbeat.interval
        var left = duration
        while left > .zero {
            let step = min(interval, left)
            loop.advance(by: step)
            heartbeats(from: live)
            left -= step
        }
    }

    /// The workers declared lost so far, as the loss watcher was told.
    var losses: [Loss] { lossLog.entries.withLock { $0 } }

    /// The warnings the coordinator logged so far.
    var warnings: [String] { warningLog.messages }

    /// The frames of one batch message carrying `messages`.
    static func batch(_ messages: [WireMessage]) -> [[UInt8]] {
        var builder = BatchBuilder()
        for message in messages { builder.append(message) }
        return [Header(.batch, correlation: UInt64(builder.count)).bytes, [], builder.payload]
    }

    private func collect() {
        sent += loop.readOutbound()
    }

    private func take(on socket: SocketID, peer: String) -> [WireMessage] {
        collect()
        let identity = Array(peer.utf8)
        var taken: [WireMessage] = []
        sent.removeAll { outbound in
            guard outbound.socket == socket, outbound.frames.first == identity else { return false }
            taken.append(try! WireMessage(frames: outbound.frames.dropFirst()))
            return true
        }
        return taken
    }
}

extension WireMessage {
    /// An event for `address` with a JSON payload.
    static func event(_ address: String, _ json: String = #""increment""#, correlation: UInt64) -> WireMessage {
        WireMessage(Header(.event, correlation: correlation), address: address, payload: Array(json.utf8))
    }

    /// A worker's `state` reply to a request it was sent.
    func stateReply(_ json: String) -> WireMessage {
        WireMessage(Header(.state, correlation: header.correlation), address: address, payload: Array(json.utf8))
    }

    /// The error this message carries (its kind is `error`).
    var wireError: WireError? {
        header.kind == .error ? try? WireJSON.decode(WireError.self, from: payload) : nil
    }

    var text: String { String(decoding: payload, as: UTF8.self) }
}

extension [WireMessage] {
    /// Each batch replaced by the messages it carries, in order.
    var unbatched: [WireMessage] {
        flatMap { $0.header.kind == .batch ? try! Batch.unpack($0.payload) : [$0] }
    }
}

/// The workers declared lost, as the loss watcher is told them (on the loop's thread, the test's).
final class LossLog: Sendable {
    let entries = Mutex<[InMemoryCluster.Loss]>([])
}

/// Keeps what is logged at warning level and above (or from `level`), for tests to read.
final class WarningLog: LogHandler, Sendable {
    private let lines = Mutex<[String]>([])
    private let level: Logger.Level

    init(level: Logger.Level = .warning) {
        self.level = level
    }

    var messages: [String] { lines.withLock { $0 } }

    func log(event: LogEvent) {
        lines.withLock { $0.append("\(event.message)") }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { nil }
        set {}
    }

    var metadata: Logger.Metadata {
        get { [:] }
        set {}
    }

    var logLevel: Logger.Level {
        get { level }
        set {}
    }
}
