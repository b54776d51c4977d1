import ArgumentParser
import Foundation
import GroveCluster
import Logging

@main
struct FSMLaunch: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fsm-launch",
        abstract: "Runs a topology: the coordinator, and a process for every worker.",
        discussion: """
            Starts the coordinator in this process, spawns the topology's workers, and prints one line \
            `ready <clients-endpoint>` on stdout once every worker has registered. \
            SIGINT or SIGTERM stops everything (so does the launching process exiting, with \
            --exit-with-parent). Workers marked "external" are not spawned: start them by \
            hand with `--name NAME --coordinator ENDPOINT`.

            Without a topology file, runs the embedded default (Topologies/default.json).

            A topology with security.coordinatorKey speaks CURVE on every endpoint: fsm-launch \
            reads the key files it names (relative to the topology file), makes a fresh key pair for \
            every worker it starts and hands it over on the worker's standard input. Over ipc \
            without keys, only processes of the launching user may connect.

            A worker that exits, or stops answering its heartbeats (it is killed), is restarted after a \
            backoff, as its group's "supervision" says; a group that exits more often than its \
            intensity allows gives up: by default fsm-launch then stops everything and exits 3, so \
            that systemd or Kubernetes can restart the whole topology.

            Exit status: 0 after a clean stop (or a valid --check), 2 for an invalid topology, 1 when the \
            coordinator cannot start or workers do not register in time, 3 when a worker group gave \
            up after the topology was ready (supervision.onGiveUp "escalate").
            """
    )

    @Argument(help: "The topology JSON file. Defaults to the embedded default topology.")
    var topology: String?

    @Flag(help: "Validate the topology, print a summary, and exit.")
    var check = false

    @Option(parsing: .unconditional, help: "Seconds to wait for every worker to register before giving up: above 0, at most 1000000.")
    var readyTimeout: Double = 30

    @Option(help: "Log level for the coordinator and supervisor: trace, debug, info, notice, warning, error.")
    var logLevel: String = "notice"

    @Flag(help: "Stop the topology when the process that started fsm-launch exits, even when it was killed with SIGKILL (checked every 250 ms; fsm-load passes this).")
    var exitWithParent = false

    @Option(parsing: .unconditional, help: "With --exit-with-parent: the parent's process id, as the parent passes it. Closes the gap where the parent ends before fsm-launch first looks: then fsm-launch stops at once.")
    var parentPid: Int32?

    func validate() throws {
        // Bounded: Duration.seconds traps on a value as large as 1e21.
        guard readyTimeout > 0, readyTimeout <= 1_000_000 else {
            throw ValidationError("--ready-timeout must be a number of seconds above 0 and at most 1000000, e.g. --ready-timeout 60; got \(readyTimeout)")
        }
        if let parentPid {
            guard exitWithParent else { throw ValidationError("--parent-pid only means something with --exit-with-parent; add it, or drop --parent-pid") }
            guard parentPid > 0 else { throw ValidationError("--parent-pid must be a process id (a positive number), got \(parentPid)") }
        }
    }

    func run() async throws {
        // First thing: whose exit ends this topology (getppid() changes once the parent is gone).
        let parent = parentPid ?? getppid()
        let topology = try loadTopology()
        if check {
            var problems: [String] = []
            for (index, group) in topology.workers.enumerated() {
                if group.external, !group.arguments.isEmpty {
                    problems.append("$.workers[\(index)].arguments: external workers are started by hand, so these arguments would be ignored; pass them when you start \(group.name)")
                } else if !group.external, Supervisor.findExecutable(group.executable, besides: Self.executableDirectory()) == nil {
                    problems.append("$.workers[\(index)].executable: '\(group.executable)' was not found next to fsm-launch or on PATH; build it or fix the name")
                }
            }
            do {
                _ = try ClusterKeys(topology: topology, relativeTo: topologyDirectory)
            } catch {
                problems.append(error.description)
            }
            guard problems.isEmpty else {
                for problem in problems { printError("\(topology.name): \(problem)") }
                throw ExitCode(2)
            }
            print("ok: topology '\(topology.name)': " + Self.count(topology.workerInstances.count, "worker instance")
                  + " in " + Self.count(topology.workers.count, "group") + ", " + Self.count(topology.machines.count, "machine")
                  + ", " + Self.count(topology.io.count, "io placement") + ", " + Self.count(topology.routes.count, "route"))
            return
        }
        let level = Logger.Level(rawValue: logLevel) ?? .notice
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let coordinator: Coordinator
        do {
            coordinator = try Coordinator(topology: topology, keysRelativeTo: topologyDirectory)
        } catch {
            printError("error: \(error)")
            throw ExitCode(1)
        }
        if topology.security.insecure {
            Logger(label: "grove.launch").warning("""
                topology '\(topology.name)' says "insecure": its tcp endpoints (\(topology.tcpEndpoints.joined(separator: ", "))) \
                accept anyone who can reach them, without authentication or encryption. Make keys with fsm-keys new and \
                set security.coordinatorKey to run it safely
                """)
        }
        coordinator.start()
        let signals = SignalWatcher()
        let supervisor = Supervisor(topology: topology, coordinator: coordinator,
                                    executableDirectory: Self.executableDirectory(), log: Logger(label: "grove.launch"),
                                    onEscalate: { reason in signals.escalate(reason) })
        if exitWithParent { signals.watchParent(parent) }
        guard signals.received == nil else {
            // The launching process is already gone (or asked us to stop): start nothing.
            coordinator.stop()
            return
        }
        do {
            try supervisor.spawnAll()
        } catch {
            printError("error: \(error)")
            supervisor.shutdown()
            coordinator.stop()
            throw ExitCode(1)
        }
        let endpoints = coordinator.endpoints
        Logger(label: "grove.launch").notice(
            "coordinator of '\(topology.name)' bound: clients \(endpoints.clients), workers \(endpoints.workers), events \(endpoints.events)")
        for group in topology.workers where group.external {
            for name in group.instanceNames {
                let keys = coordinator.publicKey.map { " --key-file \(name).key_secret --coordinator-key \($0.z85)" } ?? ""
                printError("waiting for external worker \(name): start it with "
                    + "`fsm-worker --name \(name) --coordinator \(coordinator.workersConnectEndpoint)\(keys)` (on another host: that host's address)")
            }
        }
        let deadline = ContinuousClock.now + .seconds(readyTimeout)
        while !coordinator.allWorkersRegistered {
            let stop = signals.received
            if stop != nil || ContinuousClock.now > deadline {
                switch stop {
                case .escalation(let reason): printError("error: \(reason)")
                case .signal: break
                case nil:
                    printError("error: workers \(coordinator.workersNotRegistered.joined(separator: ", ")) did not register within "
                        + "\(readyTimeout) s; see their output above, or start external workers with --coordinator \(coordinator.workersConnectEndpoint)")
                }
                coordinator.stop()
                supervisor.shutdown()
                if case .signal = stop { throw ExitCode(0) }
                throw ExitCode(1)
            }
            try? await Task.sleep(for: .milliseconds(20))
        }
        supervisor.becameReady()
        print("ready \(coordinator.clientsConnectEndpoint)")
        fflush(nil)
        await signals.wait()
        // The coordinator first: workers going away during a shutdown are not losses to report.
        coordinator.stop()
        supervisor.shutdown()
        if case .escalation(let reason) = signals.received {
            printError("error: \(reason)")
            throw ExitCode(Self.escalationStatus)
        }
    }

    /// The exit status after a worker group gave up and escalated (`supervision.onGiveUp`).
    static let escalationStatus: Int32 = 3

    /// Where the topology's relative key file paths start: the topology file's folder.
    var topologyDirectory: URL? {
        topology.map { URL(fileURLWithPath: $0).deletingLastPathComponent() }
    }

    func loadTopology() throws -> Topology {
        guard let path = topology else { return Topology.defaultTopology }
        do {
            return try Topology.load(contentsOf: URL(fileURLWithPath: path))
        } catch {
            printError("\(error)")
            throw ExitCode(2)
        }
    }

    static func count(_ number: Int, _ noun: String) -> String {
        "\(number) \(noun)\(number == 1 ? "" : "s")"
    }

    /// Where fsm-launch itself lives: worker executables named without a path are looked up here.
    static func executableDirectory() -> URL {
        let path = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: path).deletingLastPathComponent()
    }
}

func printError(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
}
