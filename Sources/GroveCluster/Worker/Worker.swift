import Foundation
import GroveWire
import Logging
import ZeroMQ

/// Runs a worker process: connects to the coordinator, registers, hosts the machines the
/// topology places here and serves io requests.
public enum Worker {
    /// The exit status of a worker the coordinator rejected (EX_CONFIG): `fsm-launch` does not
    /// restart it, since only a change of topology or worker can fix it.
    public static let rejectedExitStatus: Int32 = 78

    /// Reads the command line, runs the worker until the process is killed, and exits with
    /// status 2 on a bad command line or 1 when the socket cannot be set up.
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
            exit(error.message.isEmpty ? 0 : 2)
        }
        await main(configuration, options: options)
    }

    /// Runs the worker with options already read (say, by an `AsyncParsableCommand` holding
    /// them as an `@OptionGroup`) until the process is killed; exits with status 1 when the
    /// socket cannot be set up.
    /// - Parameters:
    ///   - configuration: The machines and handlers this worker offers.
    ///   - options: Who the worker is and where its coordinator listens.
    public static func main(_ configuration: WorkerConfiguration, options: Options) async -> Never {
        // A launcher that ignores or blocks SIGTERM (fsm-launch handles it itself) passes that on
        // through exec; a worker must stop on SIGTERM, so restore the defaults.
        for number in [SIGTERM, SIGINT] { signal(number, SIG_DFL) }
        var unblock = sigset_t()
        sigemptyset(&unblock)
        sigaddset(&unblock, SIGTERM)
        sigaddset(&unblock, SIGINT)
        pthread_sigmask(SIG_UNBLOCK, &unblock, nil)
        do {
            try await run(configuration, options: options)
            exit(0)
        } catch {
            FileHandle.standardError.write(Data("error: \(error)\n".utf8))
            exit(1)
        }
    }

    /// Runs a worker until the process ends.
    /// - Throws: `ZMQError` when the socket cannot be created or connected, ``WireError`` when
    ///   the keys cannot be read.
    public static func run(_ configuration: WorkerConfiguration, options: Options) async throws {
        // First thing, so a parent that ends while the worker starts up is noticed too; a parent
        // that passed its pid is noticed even when it ended before this process got here.
        let parent = options.parentPid ?? getppid()
        var log = Logger(label: "grove.worker")
        log[metadataKey: "worker"] = "\(options.name)"
        let credentials = try Credentials.resolve(keyFile: options.keyFile, coordinatorKey: options.coordinatorKey)
        let context = try ZMQContext()
        let loop = try IOLoop(name: "grove-worker-io")
        let socketID = loop.add(try dealer(context, options, credentials))
        let link = WorkerLink(worker: options.name, loop: loop, socket: socketID)
        let logger = log
        // The Paranoid Pirate way: a coordinator gone silent gets a new socket (what the old one
        // queued for it is dropped) and a new registration, which the core sends after this.
        let reconnect: @Sendable () -> Void = {
            loop.execute { io in
                do {
                    io.replace(socketID, with: try dealer(context, options, credentials))
                } catch {
                    logger.error("cannot reopen the connection to the coordinator at \(options.coordinator): \(error); the next attempt tries again")
                }
            }
        }
        let runtime = WorkerRuntime(configuration: configuration, link: link, log: log, coordinator: options.coordinator,
                                    reconnect: reconnect)
        // The runtime and its hosts run on the loop's thread (``LoopExecutor``): a received
        // batch is queued, drained and answered right there, with no thread hand-off.
        loop.start(WorkerLoopDelegate(onBatch: { batch in runtime.assumeIsolated { $0.handle(batch) } }))
        await runtime.start()
        // The keeper: ticks the session core (heartbeats, silence, reconnection, notices) at the
        // pace it asks for, and watches the parent.
        let keeper = Task {
            var parentCheckedAt = ContinuousClock.now
            var pause = Duration.milliseconds(50)
            while !Task.isCancelled {
                try? await Task.sleep(for: pause)
                let now = ContinuousClock.now
                if options.exitWithParent, now - parentCheckedAt >= .milliseconds(250) {
                    parentCheckedAt = now
                    if getppid() != parent {
                        log.notice("the launching process is gone; exiting")
                        exit(0)
                    }
                }
                pause = await runtime.tick(now: now)
            }
        }
        await keeper.value  // the process ends by exit()
    }

    /// A DEALER to the coordinator with routing id = the worker's name. No ZMTP heartbeat: the
    /// application heartbeat (``WorkerCore``) alone decides when the coordinator is gone, at
    /// the topology's settings; a transport timer of its own could drop the connection, and
    /// what its pipes held, while the session still counts as alive.
    private static func dealer(_ context: ZMQContext, _ options: Options, _ credentials: Credentials?) throws(ZMQError) -> Socket {
        let socket = try Socket(context, .dealer)
        try credentials?.apply(to: socket)
        try socket.setRoutingID(Array(options.name.utf8))
        try socket.setLinger(milliseconds: 0)
        try socket.setSendHighWaterMark(100_000)
        try socket.setReceiveHighWaterMark(100_000)
        try socket.setReconnectInterval(milliseconds: 100)
        try socket.connect(options.coordinator)
        return socket
    }
}
