import Foundation
import GroveCluster
import GroveCoordinator
import GroveWorker
import Logging
import Synchronization
import ZeroMQ

/// Runs ``SupervisorCore`` for the topology's worker processes: spawns, kills and waits as it
/// says. The restart policy itself (intensity, backoff, final exits, giving up) lives in the
/// core; this type only moves processes.
final class Supervisor: Sendable {
    struct LaunchError: Error, CustomStringConvertible {
        var description: String
    }

    let topology: Topology
    let coordinator: Coordinator
    let log: Logger
    private let core: Mutex<SupervisorCore>
    private let processes = Mutex<[String: Process]>([:])
    /// The public key each running worker was given (with CURVE), forgotten when it is replaced.
    private let workerKeys = Mutex<[String: CurveKey]>([:])
    /// Each worker's executable and arguments, resolved once by ``resolveAll()``.
    private let commands: Mutex<[String: (executable: URL, arguments: [String])]> = Mutex([:])
    private let executableDirectory: URL
    /// The topology's data directory, absolute, passed to every worker as `--data-dir`.
    private let dataDirectory: URL
    /// The topology's audit directory, absolute, passed as `--audit-dir` when it audits a machine.
    private let auditDirectory: URL?
    /// The PostgreSQL store's password file, absolute, passed as `--store-password-file`.
    private let storePasswordFile: URL?
    /// Called once, with the reason, when a group gives up and escalates.
    private let onEscalate: @Sendable (String) -> Void

    init(topology: Topology, coordinator: Coordinator, executableDirectory: URL, dataDirectory: URL, auditDirectory: URL? = nil,
         storePasswordFile: URL? = nil, log: Logger, onEscalate: @escaping @Sendable (String) -> Void) {
        self.storePasswordFile = storePasswordFile
        self.topology = topology
        self.coordinator = coordinator
        self.executableDirectory = executableDirectory
        self.dataDirectory = dataDirectory
        self.auditDirectory = auditDirectory
        self.log = log
        self.onEscalate = onEscalate
        core = Mutex(SupervisorCore(topology: topology))
        coordinator.watchLosses { [weak self] worker, pid, cause in
            guard let self else { return }
            self.run(self.core.withLock { $0.lost(worker, pid: pid, cause: cause, now: .now) })
        }
        coordinator.watchCrashes { [weak self] worker, pid, reason in
            guard let self else { return }
            self.run(self.core.withLock { $0.forgive(worker, pid: pid, reason: reason) })
        }
    }

    /// Resolves every group's executable, then starts every worker.
    /// - Throws: ``LaunchError`` naming an executable that was not found.
    func spawnAll() throws {
        var resolved: [String: (executable: URL, arguments: [String])] = [:]
        for (index, group) in topology.workers.enumerated() where !group.external {
            let executable = try resolve(group.executable, at: "$.workers[\(index)].executable")
            for name in group.instanceNames { resolved[name] = (executable, group.arguments) }
        }
        commands.withLock { $0 = resolved }
        run(core.withLock { $0.startAll() })
    }

    /// Every worker registered: a group that gives up from now on follows its policy.
    func becameReady() { core.withLock { $0.becameReady() } }

    /// A worker executable: a path as given, else next to fsm-launch, else on PATH.
    static func findExecutable(_ executable: String, besides directory: URL) -> URL? {
        let candidates = executable.contains("/")
            ? [URL(fileURLWithPath: executable)]
            : [directory.appendingPathComponent(executable)]
                + (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map {
                    URL(fileURLWithPath: String($0)).appendingPathComponent(executable)
                }
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }

    /// - Parameter path: Where the topology names it (`$.workers[1].executable`), for the error.
    func resolve(_ executable: String, at path: String) throws -> URL {
        guard let found = Self.findExecutable(executable, besides: executableDirectory) else {
            throw LaunchError(description: "worker executable '\(executable)' not found (looked in \(executableDirectory.path) and PATH); "
                + "build it with `swift build` or fix \(path)")
        }
        return found
    }

    private func run(_ actions: [SupervisorAction]) {
        for action in actions {
            switch action {
            case .start(let worker):
                // A start of a worker that ran before is a restart, for the metrics.
                if processes.withLock({ $0[worker] != nil }) { coordinator.noteWorkerRestart(worker) }
                start(worker)
            case .wake(let worker, let deadline):
                let delay = max(0, ContinuousClock.now.duration(to: deadline) / .milliseconds(1))
                DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(Int(delay.rounded(.up)))) { [weak self] in
                    guard let self else { return }
                    let registered = !self.coordinator.workersNotRegistered.contains(worker)
                    self.run(self.core.withLock { $0.due(worker, now: .now, registered: registered) })
                }
            case .kill(let worker, let pid):
                // Only while it is still the process we started and has not been reaped.
                let process = processes.withLock { $0[worker] }
                if let process, process.processIdentifier == pid, process.isRunning { kill(pid, SIGKILL) }
            case .report(let worker, let pid, let exit, let blamesEvent):
                // Posted to the coordinator's loop before a successor can start: it has failed
                // what waited on this process, and retired its incarnation, by the time the
                // successor registers.
                coordinator.workerExited(worker, pid: pid, reason: "process \(exit)", blamesEvent: blamesEvent)
            case .log(let level, let message, let worker):
                log.log(level: level, "\(message)", metadata: ["worker": "\(worker)"])
            case .escalate(let reason):
                log.critical("\(reason)")
                onEscalate(reason)
            }
        }
    }

    private func start(_ worker: String) {
        guard let command = commands.withLock({ $0[worker] }) else { return }
        let process = Process()
        process.executableURL = command.executable
        // The command line is written by the type that reads it: the group's own arguments follow.
        var options = Worker.Options(name: worker, coordinator: coordinator.workersConnectEndpoint, exitWithParent: true,
                                     parentPid: getpid(), dataDirectory: dataDirectory.path, auditDirectory: auditDirectory?.path,
                                     storePasswordFile: storePasswordFile?.path)
        if let group = topology.workerInstances.first(where: { $0.name == worker })?.group,
           topology.workers.first(where: { $0.name == group })?.direct == true {
            options.direct = topology.directEndpoint(ofWorker: worker, connectingTo: coordinator.workersConnectEndpoint)
        }
        process.standardOutput = FileHandle.standardError  // stdout is fsm-launch's data: the ready line
        // A trap ends the worker at once rather than after (or, hung, instead of) symbolication.
        process.environment = WorkerEnvironment.spawning(from: ProcessInfo.processInfo.environment)
        process.standardInput = FileHandle.nullDevice
        // With CURVE: a key pair of its own for each process, admitted for its group, its secret
        // handed over on standard input so that it never shows in `ps`.
        var secret: Data?
        if let coordinatorKey = coordinator.publicKey, let group = topology.workerInstances.first(where: { $0.name == worker })?.group {
            do {
                let keys = try CurveKeyPair.generate()
                coordinator.admitWorkerKey(keys.publicKey, group: group)
                if let old = workerKeys.withLock({ $0.updateValue(keys.publicKey, forKey: worker) }) { coordinator.forgetWorkerKey(old) }
                options.keyFile = "-"
                options.coordinatorKey = coordinatorKey.z85
                secret = Data(KeyFile.text(keys, name: worker, secret: true).utf8)
                process.standardInput = Pipe()
            } catch {
                log.error("cannot make a key pair for worker: \(error)", metadata: ["worker": "\(worker)"])
            }
        }
        process.arguments = options.arguments + command.arguments
        process.terminationHandler = { [weak self] process in
            self?.exited(worker, pid: process.processIdentifier, status: process.terminationStatus, reason: process.terminationReason)
        }
        do {
            // Under the core's lock: a process that ends at once is reported (its termination
            // handler waits for the lock) only after its start is.
            try core.withLock { core in
                try process.run()
                if let secret, let pipe = process.standardInput as? Pipe {
                    pipe.fileHandleForWriting.write(secret)
                    try? pipe.fileHandleForWriting.close()
                }
                processes.withLock { $0[worker] = process }
                core.started(worker, pid: process.processIdentifier, now: .now)
            }
        } catch {
            log.error("could not start worker: \(error)", metadata: ["worker": "\(worker)", "executable": "\(command.executable.path)"])
            // As a shell reports a command it cannot run: counted like any exit, so it gives up in time.
            run(core.withLock { $0.exited(worker, pid: nil, .status(126), now: .now) })
            return
        }
        log.info("worker started", metadata: ["worker": "\(worker)", "pid": "\(process.processIdentifier)"])
    }

    private func exited(_ worker: String, pid: Int32, status: Int32, reason: Process.TerminationReason) {
        let exit: WorkerExit = reason == .uncaughtSignal ? .signal(status) : .status(status)
        run(core.withLock { $0.exited(worker, pid: pid, exit, now: .now) })
    }

    /// Stops every worker: SIGTERM, then SIGKILL for those still running after two seconds. One
    /// still running five seconds after its SIGKILL (held by a tracer such as a crash
    /// backtracer, or in uninterruptible sleep) is named in the log and left: fsm-launch ends
    /// anyway.
    func shutdown() {
        core.withLock { $0.stop() }
        let running = processes.withLock { Array($0.values) }
        for process in running where process.isRunning { process.terminate() }
        Self.wait(for: running, seconds: 2)
        for process in running where process.isRunning { kill(process.processIdentifier, SIGKILL) }
        Self.wait(for: running, seconds: 5)
        for process in running where process.isRunning {
            log.error("worker pid \(process.processIdentifier) is still running 5 s after SIGKILL (held by a tracer, or in uninterruptible sleep); leaving it")
        }
    }

    private static func wait(for processes: [Process], seconds: TimeInterval) {
        let deadline = Date().addingTimeInterval(seconds)
        while processes.contains(where: \.isRunning), Date() < deadline { usleep(10_000) }
    }
}
