import Foundation
import GroveCluster
@_spi(GroveInternal) import GroveWire
import Logging
import ServiceLifecycle
import ZeroMQ

/// Runs a worker process: connects to the coordinator, registers, hosts the machines the
/// topology places here and serves io requests.
public enum Worker {
    /// Reads the command line and runs the worker as ``main(_:options:)`` does; exits with
    /// status 2 on a bad command line.
    /// - Parameters:
    ///   - configuration: The machines and handlers this worker offers.
    ///   - arguments: The command line without the program name; defaults to the process's.
    ///   - moreUsage: Lines about options the executable reads itself, added to the usage.
    public static func main(_ configuration: WorkerConfiguration, arguments: [String] = Array(CommandLine.arguments.dropFirst()),
                            moreUsage: String? = nil) async -> Never {
        let options: Options
        do {
            options = try Options(arguments: arguments)
        } catch {
            // Asked for (--help): the usage on stdout; a bad command line: on stderr.
            let text = error.description + (moreUsage.map { "\n" + $0 } ?? "") + "\n"
            (error.message.isEmpty ? FileHandle.standardOutput : FileHandle.standardError).write(Data(text.utf8))
            exit((error.message.isEmpty ? WorkerExitStatus.stopped : .commandLine).rawValue)
        }
        await main(configuration, options: options)
    }

    /// Runs the worker with options already read (say, by an `AsyncParsableCommand` holding
    /// them as an `@OptionGroup`) until SIGTERM or SIGINT, or the launching process ending (with
    /// `exitWithParent`), then exits with status 0; exits with status 1 when the socket cannot be
    /// set up. The signals stop it through a swift-service-lifecycle `ServiceGroup`: to run a
    /// worker beside services of your own (a database client its io handlers use, say), put
    /// ``run(_:options:)`` in your own group instead.
    /// - Parameters:
    ///   - configuration: The machines and handlers this worker offers.
    ///   - options: Who the worker is and where its coordinator listens.
    public static func main(_ configuration: WorkerConfiguration, options: Options) async -> Never {
        if options.isDescribing { await describeAndExit(configuration, options) }  // fsm-check --worker: no worker
        // A launcher that ignores or blocks SIGTERM (fsm-launch's own signal handling does) passes
        // that on through exec. The group below receives them either way once it runs; the
        // defaults make a SIGTERM that comes before it (while the worker starts) end it too,
        // where an ignored one would be lost.
        for number in [SIGTERM, SIGINT] { signal(number, SIG_DFL) }
        var unblock = sigset_t()
        sigemptyset(&unblock)
        sigaddset(&unblock, SIGTERM)
        sigaddset(&unblock, SIGINT)
        pthread_sigmask(SIG_UNBLOCK, &unblock, nil)
        let worker = ClosureService { try await run(configuration, options: options) }
        let group = ServiceGroup(configuration: ServiceGroupConfiguration(
            services: [.init(service: worker, successTerminationBehavior: .gracefullyShutdownGroup)],
            gracefulShutdownSignals: [.sigterm, .sigint], logger: Logger(label: "grove.worker")))
        do {
            try await group.run()
            exit(WorkerExitStatus.stopped.rawValue)
        } catch {
            FileHandle.standardError.write(Data("error: \(error)\n".utf8))
            exit(WorkerExitStatus.failed.rawValue)
        }
    }

    /// Runs a worker until the swift-service-lifecycle `ServiceGroup` it runs in shuts down
    /// gracefully (``main(_:options:)``'s does on SIGTERM and SIGINT), its task is cancelled, or,
    /// with `exitWithParent`, the launching process ends; then stops its I/O thread and returns.
    ///
    /// In a group of your own: `ClosureService { try await Worker.run(configuration, options: options) }`.
    /// Returning waits for the I/O thread to end: a machine whose update never returns holds it,
    /// as it holds the heartbeats (the coordinator declares such a worker lost, and `fsm-launch`
    /// kills it).
    /// - Throws: `ZMQError` when the socket cannot be created or connected, ``WireError`` when
    ///   the keys cannot be read, or `untrusted-endpoint` when another local user may stand
    ///   behind the coordinator's endpoint (``ClientEndpoint/verify(_:curve:uid:)``).
    public static func run(_ configuration: WorkerConfiguration, options: Options) async throws {
        // First thing, so a parent that ends while the worker starts up is noticed too; a parent
        // that passed its pid is noticed even when it ended before this process got here.
        let parent = ParentProcess(pid: options.parentPid)
        var log = Logger(label: "grove.worker")
        log[metadataKey: "worker"] = "\(options.name)"
        let credentials = try Credentials.resolve(keyFile: options.keyFile, coordinatorKey: options.coordinatorKey)
        let context = try ZMQContext()
        let loop = try IOLoop(name: "grove-worker-io")
        let socketID = loop.add(try dealer(context, options, credentials))
        let direct = try options.direct.map { endpoint in
            try bindDirect(endpoint, context: context, loop: loop, worker: options.name, credentials: credentials, log: log)
        }
        let link = WorkerLink(worker: options.name, loop: .io(loop), socket: socketID, direct: direct?.route, log: log)
        let logger = log
        // The Paranoid Pirate way: a coordinator gone silent gets a new socket (what the old one
        // queued for it is dropped) and a new registration, which the core sends after this.
        let reconnect: @Sendable () -> Void = {
            loop.execute { io in
                do {
                    io.replace(socketID, with: try dealer(context, options, credentials))
                } catch {
                    // The old socket would connect again on its own, to what may no longer be
                    // the coordinator's: it stops, and the worker stays silent until a check passes.
                    if (error as? WireError)?.code == .untrustedEndpoint { try? io.socket(socketID).disconnect(options.coordinator) }
                    logger.error("cannot reopen the connection to the coordinator at \(options.coordinator): \(error); the next attempt tries again")
                }
            }
        }
        let (dataDirectory, name, passwordFile) = (options.dataDirectory, options.name, options.storePasswordFile)
        var openRecorder: (@Sendable () throws(StoreError) -> FlightRecorder)?
        if !FlightRecorder.switchedOff {
            openRecorder = { () throws(StoreError) -> FlightRecorder in
                FlightRecorder(log: try MappedFlightLog.open(directory: dataDirectory, worker: name))
            }
        }
        let runtime = WorkerRuntime(configuration: configuration, link: link, log: log, coordinator: options.coordinator,
                                    reconnect: reconnect,
                                    openStore: { (shared: SharedStore?) throws(StoreError) -> any MachineStore in
                                        guard let shared else { return try SQLiteMachineStore.open(directory: dataDirectory, worker: name) }
                                        return try PostgresMachineStore.open(shared, worker: name, passwordFile: passwordFile)
                                    },
                                    openRecorder: openRecorder)
        runtime.turn.audit.use(directory: options.auditDirectory)
        // The runtime and its hosts run on the loop's thread (``LoopExecutor``): a received
        // batch is queued, drained and answered right there, with no thread hand-off.
        let directSockets = direct.map { direct in
            WorkerLoopDelegate.DirectSockets(route: direct.route, zap: direct.zap,
                                             onRequests: { batch in runtime.assumeIsolated { $0.handleDirect(batch) } },
                                             metrics: link.metrics)
        }
        loop.start(WorkerLoopDelegate(onBatch: { batch in runtime.assumeIsolated { $0.handle(batch) } },
                                      messageBytes: { link.messageBytes }, batchEnvelopes: { link.batchEnvelopes },
                                      direct: directSockets))
        await runtime.start()
        // From the first moment of a graceful stop, direct requests are answered `moved`
        // `stopping` (their clients locate again) rather than taken and left unanswered.
        await withGracefulShutdownHandler {
            await cancelWhenGracefulShutdown {
                await withTaskGroup(of: Void.self) { tasks in
                    tasks.addTask { await keep(runtime) }
                    if options.exitWithParent {
                        tasks.addTask {
                            await parent.waitUntilGone()
                            if parent.isGone { logger.notice("the launching process is gone; exiting") }
                        }
                    }
                    await tasks.next()  // the keeper ends only when cancelled: the parent is gone
                    tasks.cancelAll()
                }
            }
        } onGracefulShutdown: {
            direct?.route.beginStopping()
        }
        direct?.route.beginStopping()
        // `stop()` joins the loop's thread: waited for on a thread of its own, not the pool's.
        await withCheckedContinuation { (stopped: CheckedContinuation<Void, Never>) in
            Thread { loop.stop(); stopped.resume() }.start()
        }
        // The direct socket's file is this process's alone (a name per start): it goes with it.
        if let direct, case .socket(let path) = LocalEndpoint(direct.route.endpoint) { unlink(path) }
    }

    /// Ticks the session core (heartbeats, silence, reconnection, notices) at the pace it asks
    /// for, until cancelled.
    private static func keep(_ runtime: WorkerRuntime) async {
        var pause = Duration.milliseconds(50)
        while !Task.isCancelled {
            try? await Task.sleep(for: pause)
            guard !Task.isCancelled else { return }
            pause = await runtime.tick(now: .now)
        }
    }

    /// A DEALER to the coordinator with a routing id of its own (``routingID(for:)``). No ZMTP
    /// heartbeat: the application heartbeat (``WorkerCore``) alone decides when the coordinator
    /// is gone, at the topology's settings; a transport timer of its own could drop the
    /// connection, and what its pipes held, while the session still counts as alive. The
    /// endpoint is checked before each connection: a new socket is a new chance for a squatter.
    private static func dealer(_ context: ZMQContext, _ options: Options, _ credentials: Credentials?) throws -> Socket {
        try ClientEndpoint.verify(options.coordinator, curve: credentials != nil)
        let socket = try Socket(context, .dealer)
        try credentials?.apply(to: socket)
        try socket.setRoutingID(routingID(for: options.name))
        try socket.setLinger(milliseconds: 0)
        try socket.setSendHighWaterMark(100_000)
        try socket.setReceiveHighWaterMark(100_000)
        try socket.setReconnectInterval(milliseconds: 100)
        try socket.connect(options.coordinator)
        return socket
    }

    /// A fresh routing id for a connection of worker `name`: the name (its first 200 bytes, for
    /// people reading ZeroMQ traces), `#`, and 32 hex digits of a new random number. The
    /// coordinator learns it from the registration and sends the worker's messages there only;
    /// a peer that connects under the worker's name, or under an id it cannot guess, receives
    /// none of them (docs/PROTOCOL.md, "Routing ids"). New for every socket: a reconnection
    /// registers again.
    static func routingID(for name: String) -> [UInt8] {
        let random = (0..<2).map { _ in String(UInt64.random(in: 0 ... .max), radix: 16) }
            .map { String(repeating: "0", count: 16 - $0.count) + $0 }.joined()
        return Array(name.utf8.prefix(200)) + Array("#\(random)".utf8)
    }
}
