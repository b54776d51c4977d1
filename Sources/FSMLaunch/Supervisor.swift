import Foundation
import GroveCluster
import Logging
import Synchronization

/// Spawns the topology's worker processes and restarts those that exit unexpectedly.
final class Supervisor: Sendable {
    struct LaunchError: Error, CustomStringConvertible {
        var description: String
    }

    private struct Child {
        var process: Process
        var restarts: Int
        var started: ContinuousClock.Instant
    }

    let topology: Topology
    let coordinator: Coordinator
    let executableDirectory: URL
    let log: Logger
    private let children = Mutex<[String: Child]>([:])
    private let stopping = Atomic<Bool>(false)
    private let failures = Mutex<[String: [ContinuousClock.Instant]]>([:])
    /// Set when a worker cannot be kept running: rejected by the coordinator, a bad command line,
    /// or more than `maxRestarts` exits within `restartWindow` (like a gen_server supervisor's
    /// intensity limit).
    let givenUp = Mutex<String?>(nil)
    let maxRestarts = 5
    let restartWindow = Duration.seconds(10)

    init(topology: Topology, coordinator: Coordinator, executableDirectory: URL, log: Logger) {
        self.topology = topology
        self.coordinator = coordinator
        self.executableDirectory = executableDirectory
        self.log = log
    }

    func spawnAll() throws {
        for (index, group) in topology.workers.enumerated() where !group.external {
            let executable = try resolve(group.executable, at: "$.workers[\(index)].executable")
            for name in group.instanceNames {
                try spawn(name, executable: executable, arguments: group.arguments, restarts: 0)
            }
        }
    }

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

    private func spawn(_ name: String, executable: URL, arguments: [String], restarts: Int) throws {
        let process = Process()
        process.executableURL = executable
        process.arguments = ["--name", name, "--coordinator", coordinator.workersConnectEndpoint,
                             "--exit-with-parent", "--parent-pid", String(getpid())] + arguments
        process.standardOutput = FileHandle.standardError  // stdout is fsm-launch's data: the ready line
        process.standardInput = FileHandle.nullDevice
        process.terminationHandler = { [weak self] process in
            self?.exited(name, executable: executable, arguments: arguments, status: process.terminationStatus,
                         reason: process.terminationReason)
        }
        try process.run()
        log.info("worker started", metadata: ["worker": "\(name)", "pid": "\(process.processIdentifier)"])
        children.withLock { $0[name] = Child(process: process, restarts: restarts, started: .now) }
    }

    private func exited(_ name: String, executable: URL, arguments: [String], status: Int32, reason: Process.TerminationReason) {
        guard !stopping.load(ordering: .acquiring) else { return }
        let how = reason == .uncaughtSignal ? "killed by signal \(status)" : "exited with status \(status)"
        coordinator.workerExited(name, reason: "process \(how)")
        if reason == .exit, [2, 64, Worker.rejectedExitStatus].contains(status) {
            giveUp(name, "worker \(name) \(how): its command line or configuration was refused (see its message above); "
                + "not restarting it. Fix the topology or the worker and launch again")
            return
        }
        let now = ContinuousClock.now
        let recent = failures.withLock { failures in
            failures[name, default: []].removeAll { now - $0 > restartWindow }
            failures[name, default: []].append(now)
            return failures[name]!.count
        }
        guard recent <= maxRestarts else {
            giveUp(name, "worker \(name) \(how), its \(recent)th exit within \(restartWindow); not restarting it again. "
                + "Its machines stay unavailable; see its output above")
            return
        }
        log.warning("worker \(how); restarting", metadata: ["worker": "\(name)"])
        let restarts = children.withLock { ($0[name]?.restarts ?? 0) + 1 }
        // Back off when a worker keeps dying: 0.1 s, 0.2 s, ... up to 5 s.
        let delay = min(5.0, 0.1 * pow(2.0, Double(min(restarts - 1, 6))))
        DispatchQueue.global().asyncAfter(deadline: .now() + delay) { [weak self] in
            guard let self, !self.stopping.load(ordering: .acquiring) else { return }
            do {
                try self.spawn(name, executable: executable, arguments: arguments, restarts: restarts)
            } catch {
                self.log.error("could not restart worker", metadata: ["worker": "\(name)", "error": "\(error)"])
            }
        }
    }

    private func giveUp(_ name: String, _ message: String) {
        log.error("\(message)")
        givenUp.withLock { $0 = $0 ?? message }
    }

    /// Stops every worker: SIGTERM, then SIGKILL for those still running after two seconds.
    func shutdown() {
        stopping.store(true, ordering: .releasing)
        let processes = children.withLock { $0.values.map(\.process) }
        for process in processes where process.isRunning { process.terminate() }
        let deadline = Date().addingTimeInterval(2)
        while processes.contains(where: \.isRunning), Date() < deadline { usleep(10_000) }
        for process in processes where process.isRunning { kill(process.processIdentifier, SIGKILL) }
        for process in processes { process.waitUntilExit() }
    }
}
