import Foundation
import Grove
import GroveRuntime
import GroveWire
import Logging
import ZeroMQ

/// The machines and io work of one worker process. It lives on the I/O loop's thread (its
/// executor), and so do its hosts. Messages from the coordinator arrive in order through
/// ``handle(_:)``, called by the loop for each received batch, so per-machine FIFO holds: events
/// are handed to their hosts synchronously, in arrival order (handled at once by an idle host,
/// else queued behind what it has).
actor WorkerRuntime {
    let configuration: WorkerConfiguration
    /// The configuration's factories, bound to this worker's link.
    private let factories: [String: any HostedMachineFactory]
    let link: WorkerLink
    let calls: RemoteCalls
    let log: Logger
    /// Closes the DEALER and opens a new one to the coordinator (on the I/O thread, in order
    /// with what is sent after it).
    private let reconnect: @Sendable () -> Void
    /// The session with the coordinator: registration, heartbeats, silence. Written once per
    /// received batch (what was heard when): `@exclusivity(unchecked)` like `instances`.
    @exclusivity(unchecked) private(set) var core: WorkerCore
    private var welcome: Welcome?
    private var placed: [String: Welcome.HostedMachine] = [:]
    /// The io requests served by other workers, shared by every instance's performer.
    private var remoteIO: Set<String> = []
    /// Looked up for every event: `@exclusivity(unchecked)` (the runtime's per-access bookkeeping
    /// cost time on each). Safe because nothing touches it while it is being modified: it is
    /// only read, assigned, or iterated over a copy.
    @exclusivity(unchecked) private var instances: [String: any HostedMachine] = [:]
    private var serving: [UInt64: Task<Void, Never>] = [:]

    /// The I/O loop's thread: the runtime, its hosts and what they send share it, so a received
    /// batch is queued, drained and answered with no thread hand-off and no executor switch.
    nonisolated var unownedExecutor: UnownedSerialExecutor { link.loop.executor.asUnownedSerialExecutor() }

    /// - Parameters:
    ///   - coordinator: The coordinator's workers endpoint, for messages.
    ///   - reconnect: Replaces the DEALER with a new one connected to the coordinator.
    init(configuration: WorkerConfiguration, link: WorkerLink, log: Logger, coordinator: String,
         reconnect: @escaping @Sendable () -> Void) {
        self.configuration = configuration
        self.factories = configuration.factories.mapValues { $0.bound(to: link) }
        self.link = link
        self.calls = RemoteCalls(link: link)
        self.log = log
        self.reconnect = reconnect
        core = WorkerCore(worker: link.worker, coordinator: coordinator, now: .now)
    }

    /// Registers with the coordinator.
    func start() {
        run(core.start())
    }

    /// Heartbeats, silence and reconnection (``WorkerCore/tick(now:)``).
    /// - Returns: How long until the next tick.
    func tick(now: ContinuousClock.Instant) -> Duration {
        run(core.tick(now: now))
        return core.tickInterval
    }

    /// Executes what the session core decided.
    private func run(_ actions: [WorkerAction]) {
        for action in actions {
            switch action {
            case .register:
                register()
            case .heartbeat:
                link.send(.heartbeat, address: link.worker)
            case .reconnect:
                reconnect()
            case .failRemoteCalls(let failure):
                let failed = calls.failAll(failure)
                if failed > 0 { log.warning("failed \(failed) pending remote io call(s): \(failure.code)") }
            case .adopt(let welcome, let dropping):
                adopt(welcome, dropping: dropping)
            case .log(let level, let text):
                log.log(level: level, "\(text)")
            case .exit(let status, let text):
                log.critical("\(text)")
                exit(status)
            }
        }
    }

    private func register() {
        let registration = Registration(worker: link.worker, pid: getpid(), machineTypes: configuration.machineTypes,
                                        ioHandlers: configuration.io.names.sorted())
        link.publish(.register, address: link.worker, payload: registration)
    }

    /// One batch from the I/O loop, on its thread: every event handed to its host in arrival
    /// order (handled at once when the host is idle, else queued), then each host it woke
    /// drained once (hosts share this executor: plain calls), then every reply sent in one
    /// message.
    func handle(_ batch: [Inbound]) {
        link.beginCollecting()
        link.drains.beginCollecting()
        queue(batch)
        link.drains.drainCollected()
        link.flush()
    }

    /// Queues a batch from the I/O thread in order; ``handle(_:)`` then drains the hosts it woke
    /// (``DrainQueue/drainCollected()``) and flushes the link.
    func queue(_ batch: [Inbound]) {
        core.heard(at: .now)
        for inbound in batch {
            let frames = inbound.frames
            if frames.count == 3, let header = try? Header(frames[0]), header.kind == .batch {
                queue(envelopesOf: frames[2])
                continue
            }
            do {
                handle(try WireMessage(frames: frames))
            } catch {
                log.warning("dropped a malformed message from the coordinator", metadata: ["error": "\(error)"])
            }
        }
    }

    /// The envelopes of a batch: events go to their hosts straight from the batch's bytes.
    private func queue(envelopesOf payload: [UInt8]) {
        let envelopes: [Envelope]
        do {
            envelopes = try Batch.envelopes(in: payload)
        } catch {
            log.warning("dropped a malformed batch from the coordinator", metadata: ["error": "\(error)"])
            return
        }
        for envelope in envelopes {
            do {
                switch envelope.kind {
                case .event:
                    deliver(payload[envelope.payload], flags: envelope.flags, correlation: envelope.correlation,
                            address: try envelope.addressText(in: payload))
                case .echo:
                    link.send(.accepted, correlation: envelope.correlation, address: try envelope.addressText(in: payload))
                case .get, .cancel, .stop, .list, .batch, .state, .accepted, .error, .listing, .register, .welcome, .heartbeat,
                     .observe, .ioRequest, .ioResult, .ioCancel, .stateChanged, .effect, .worker, .output, .machine:
                    handle(try envelope.message(in: payload))
                }
            } catch {
                log.warning("dropped a malformed envelope from the coordinator", metadata: ["error": "\(error)"])
            }
        }
    }

    /// One message from the coordinator. What was heard when is noted once per batch
    /// (``queue(_:)``), not here.
    func handle(_ message: WireMessage) {
        let header = message.header
        switch header.kind {
        case .echo:
            link.send(.accepted, correlation: header.correlation, address: message.address)
        case .welcome:
            run(core.welcome(message.payload, now: .now))
        case .event:
            deliver(message.payload[...], flags: header.flags, correlation: header.correlation, address: message.address)
        case .get, .stop, .cancel:
            request(message)
        case .ioRequest:
            serve(message)
        case .ioCancel:
            if let task = serving.removeValue(forKey: header.correlation) {
                task.cancel()
                log.notice("io request cancelled", metadata: ["machine": "\(message.address)", "call": "\(header.correlation)"])
            }
        case .ioResult:
            let result: IOCallResult
            do {
                result = try IOCallResult(reading: message.payload, binary: header.flags.contains(.binary))
            } catch {
                result = .failure(.init(code: IOFailure.Code.codec.rawValue, message: "the io result could not be read: \(error.message)"))
            }
            calls.complete(header.correlation, with: result)
        case .heartbeat:
            break  // hearing it is all it is for: noted with its batch
        case .observe:
            if let observation = try? WireJSON.decode(Observation.self, from: message.payload) {
                link.observation.update(observation)
                for (address, instance) in instances { instance.setWatched(observation.watches("state:" + address)) }
            }
        case .error:
            run(core.coordinatorError(message.payload, now: .now))
        case .list, .batch, .state, .accepted, .listing, .register, .stateChanged, .effect, .worker, .output, .machine:
            // Not for workers; the core says why each is refused.
            let refusal = WorkerCore.refusal(of: header.kind)
                ?? WireError(.unknownKind, "a worker does not accept \(header.kind.name) messages")
            link.send(Self.errorReply(refusal, to: message))
        }
    }

    /// Hosts what a welcome places here. After a re-registration (the coordinator restarted, or
    /// this worker was silent) the instances of machines still placed here as before are kept,
    /// state and all; those of `dropping` go.
    private func adopt(_ welcome: Welcome, dropping: Set<String>) {
        if !dropping.isEmpty {
            // Iterates a copy (see `instances`).
            for address in Array(instances.keys) {
                let name = address.split(separator: "/", maxSplits: 1).first.map(String.init) ?? address
                if dropping.contains(name) { instances[address] = nil }
            }
        }
        self.welcome = welcome
        placed = Dictionary(welcome.machines.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        remoteIO = Set(welcome.remoteIO)
        checkRouteEvents(welcome)
        // Single machines start now (those not kept), like children of a supervisor, so watchers
        // see their initial states. Keyed instances start with their first event.
        for machine in welcome.machines where !machine.keyed {
            _ = try? instance(for: machine.name)
        }
    }

    /// Logs each route event that would not decode for its machine's type, with its place in the
    /// topology; the route itself still runs (and is refused, and logged, each time it fires).
    private func checkRouteEvents(_ welcome: Welcome) {
        for route in welcome.routeEvents ?? [] {
            guard let type = placed[route.machine]?.type, let factory = factories[type],
                  let problem = factory.check(event: Array(route.event.jsonData), address: route.machine) else { continue }
            log.error("topology \(route.path): the route's event for '\(route.machine)' (\(type)) does not decode: \(problem.message); fix \(route.path) in the topology file")
        }
    }

    private func instance(for address: String) throws(WireError) -> any HostedMachine {
        if let existing = instances[address] { return existing }
        let parts = address.split(separator: "/", maxSplits: 1)
        guard let welcome, let name = parts.first.map(String.init), let spec = placed[name] else {
            throw WireError(.unknownMachine, "machine '\(address)' is not placed on worker \(link.worker)", address: address)
        }
        guard let factory = factories[spec.type] else {
            throw WireError(.unknownMachine, "worker \(link.worker) has no machine type '\(spec.type)'", address: address)
        }
        let io = ClusterIOPerformer(address: address, local: configuration.io, remoteNames: remoteIO, calls: calls)
        let made = factory.make(address: address, mailboxCapacity: welcome.mailboxCapacity, io: io, link: link, executor: link.loop.executor)
        instances[address] = made
        return made
    }

    /// An event for `address`: handed to its host (handled at once when idle, else queued),
    /// answered `accepted` at once with the no-wait flag, else with the state it committed once
    /// it ran.
    private func deliver(_ payload: ArraySlice<UInt8>, flags: Header.Flags, correlation: UInt64, address: String) {
        let binary = flags.contains(.binary)
        let reply = StateReply(link: link, correlation: correlation, address: address, binary: binary)
        do {
            let target = try instance(for: address)
            if flags.contains(.noWait) {
                // A no-wait event is answered as soon as it is queued, or refused: either way at
                // once, not in the machine's turn.
                if let refused = target.enqueue(payload, binary: binary) { return reply.fail(refused) }
                link.send(.accepted, correlation: correlation, address: address)
                return
            }
            target.send(payload, binary: binary, reply: reply)
        } catch {
            reply.fail(error)
        }
    }

    /// A get, stop or cancel: queued on the machine like an event, so it keeps its place in the
    /// machine's FIFO and its reply comes in turn.
    private func request(_ message: WireMessage) {
        let link = link
        let address = message.address
        let correlation = message.header.correlation
        let answer: @Sendable (Result<[UInt8], WireError>) -> Void = { state in
            switch state {
            case .success(let json): link.send(.state, correlation: correlation, address: address, payload: json)
            case .failure(let error): link.send(Self.errorReply(error, to: message))
            }
        }
        withInstance(message) { instance in
            switch message.header.kind {
            case .get: instance.state(reply: answer)
            case .stop: instance.stop(reply: answer)
            default:
                instance.cancel(effect: message.payload) { error in
                    if let error {
                        link.send(Self.errorReply(error, to: message))
                    } else {
                        link.send(.accepted, correlation: correlation, address: address)
                    }
                }
            }
        }
    }

    private func withInstance(_ message: WireMessage, _ body: (any HostedMachine) -> Void) {
        do throws(WireError) {
            // Reading, stopping or cancelling does not spawn a keyed instance; only events do.
            guard instances[message.address] != nil || !message.address.contains("/") else {
                throw WireError(.unknownMachine, "instance \(message.address) has not been spawned; keyed instances start with their first event",
                                address: message.address)
            }
            body(try instance(for: message.address))
        } catch {
            link.send(Self.errorReply(error, to: message))
        }
    }

    /// Runs an io request for a machine on another worker: the request's bytes are decoded
    /// here, once, and the response encoded once, in the request's codec.
    private func serve(_ message: WireMessage) {
        let id = message.header.correlation
        let binary = message.header.flags.contains(.binary)
        let io = configuration.io
        let link = link
        func fail(_ code: IOFailure.Code, _ text: String) {
            link.send(.ioResult, correlation: id, address: message.address, payload: IOCallResult.payload(failing: code.rawValue, text))
        }
        let request: any IORequest
        do {
            let head = try IOCallHead(reading: message.payload)
            guard let type = io.requestType(named: head.name) else {
                return fail(.noHandler, "worker \(link.worker) has no handler for io request '\(head.name)'; register one in its WorkerConfiguration")
            }
            request = try Self.decode(type, from: message.payload[head.body], binary: binary)
        } catch {
            return fail(.codec, "\(error)")
        }
        // Detached: the handler and the encoding of its response run on the shared pool, not on
        // the I/O thread this actor lives on.
        serving[id] = Task.detached { [self] in
            var payload: [UInt8] = [IOCallResult.Outcome.response.rawValue]
            var flags: Header.Flags = []
            switch await io.perform(erased: request) {
            case .success(let response):
                do {
                    if try IOBody.encode(response, binary: binary, into: &payload) { flags = .binary }
                } catch {
                    payload = IOCallResult.payload(failing: IOFailure.Code.codec.rawValue, "the response to '\(type(of: request).name)' could not be encoded: \(error)")
                }
            case .failure(let failure):
                payload = IOCallResult.payload(failing: failure.code.rawValue, failure.message)
            }
            await self.finish(id, payload, flags: flags, address: message.address)
        }
    }

    private func finish(_ id: UInt64, _ payload: [UInt8], flags: Header.Flags, address: String) {
        // Cancelled meanwhile: the late result is never sent.
        guard serving.removeValue(forKey: id) != nil else { return }
        link.send(.ioResult, flags: flags, correlation: id, address: address, payload: payload)
    }

    private static func decode<R: IORequest>(_ type: R.Type, from bytes: ArraySlice<UInt8>, binary: Bool) throws -> any IORequest {
        try IOBody.decode(R.self, from: bytes, binary: binary, what: "the io request '\(R.name)'")
    }

    static func errorReply(_ error: WireError, to message: WireMessage) -> WireMessage {
        var error = error
        if error.address == nil, !message.address.isEmpty { error.address = message.address }
        return WireMessage(Header(.error, correlation: message.header.correlation), address: message.address, payload: error.payload)
    }
}
