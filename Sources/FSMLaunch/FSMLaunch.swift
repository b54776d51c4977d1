import ArgumentParser
import Foundation
import GroveCluster
import GroveCoordinator
import GroveOTel
import Logging
import ServiceLifecycle

@main
struct FSMLaunch: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fsm-launch",
        abstract: "Runs a topology: the coordinator, and a process for every worker.",
        discussion: """
            Starts the coordinator in this process, spawns the topology's workers, and prints one line \
            `ready <clients-endpoint>` on stdout once every worker has registered. \
            SIGINT or SIGTERM stops everything (so does the launching process exiting, with \
            --exit-with-parent). Workers marked "external" are not spawned: for each, \
            fsm-launch prints on stderr the command that starts it on its own host (name, workers \
            endpoint, key files) and the files to copy there first.

            Without a topology file, runs the embedded default (Topologies/default.json).

            Endpoints a topology leaves out (the default topology leaves out all three) are sockets \
            in a directory of the launching user's alone: <runtime>/<name>/clients, workers and events, \
            where <runtime> is $GROVE_RUNTIME_DIR, else $XDG_RUNTIME_DIR/grove, else /tmp/grove-<uid>. \
            fsm-launch creates both directories with mode 0700, and refuses to start when one is a \
            symbolic link, another user's, or open to group or others (the message says what to fix). \
            A socket file named in the topology must be in a directory only this user or root can \
            write. fsm-send, fsm-load and the workers find the default topology's sockets by the same \
            rule, and check them before connecting.

            A topology with security.coordinatorKey speaks CURVE on every endpoint: fsm-launch \
            reads the key files it names (relative to the topology file), makes a fresh key pair for \
            every worker it starts and hands it over on the worker's standard input. Over ipc \
            without keys, only processes of the launching user may connect.

            Machines with a durability other than "none" are kept in one SQLite database per worker \
            under the topology's durability.directory (default: grove-data/<name> beside the topology \
            file, or --data-dir), created when such a machine is first placed; fsm-launch passes it to \
            every worker as --data-dir. It must be the launching user's, mode 0700 (created so), and \
            not a symbolic link; the files in it are opened without following links.

            Machines with "audit": true have every committed transition appended, as a JSON line, to \
            <audit.directory>/<worker>.jsonl (default: grove-audit/<name> beside the topology file); \
            fsm-launch passes the directory to every worker as --audit-dir. It is held to the same \
            rules as the data directory.

            A worker that exits, or stops answering its heartbeats (it is killed), is restarted after a \
            backoff, as its group's "supervision" says; a group that exits more often than its \
            intensity allows gives up: by default fsm-launch then stops everything and exits 3, so \
            that systemd or Kubernetes can restart the whole topology.

            Exit status: 0 after a clean stop (or a valid --check), 2 for an invalid topology (or, with \
            --check, a directory it would refuse), 1 when the coordinator cannot start (a refused \
            directory or endpoint included) or workers do not register in time, 3 when a worker group gave \
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

    @Option(help: ArgumentHelp("Keep durable machines here instead of the topology's durability.directory (relative to the current directory).", valueName: "dir"))
    var dataDir: String?

    /// Where durable machines are kept: `--data-dir`, else the topology's.
    func dataDirectory(of topology: Topology, besides topologyDirectory: URL?) -> URL {
        guard let dataDir else { return topology.dataDirectory(besides: topologyDirectory) }
        return URL(fileURLWithPath: dataDir).standardizedFileURL
    }

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
        let parent = ParentProcess(pid: parentPid)
        let topology = try loadTopology()
        if check { return try printCheck(topology) }
        let level = Logger.Level(rawValue: logLevel) ?? .notice
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let log = Logger(label: "grove.launch")
        // The launching process is already gone: start nothing.
        if exitWithParent, parent.isGone { return }
        let directoryProblems = topology.directoryProblems(dataDirectory: dataDirectory(of: topology, besides: topologyDirectory),
                                                           auditDirectory: topology.auditDirectory(besides: topologyDirectory))
            + topology.storeProblems(besides: topologyDirectory)
        guard directoryProblems.isEmpty else {
            for problem in directoryProblems { printError("error: \(problem)") }
            throw ExitCode(1)
        }
        // Before the coordinator: its driver reads the process's tracer once, when it is made.
        let traces: TraceExport?
        do {
            traces = try TraceExport.start(process: "fsm-launch", log: log)
        } catch {
            printError("error: traces: \(error); fix or unset the OTEL_EXPORTER_OTLP_* variables")
            throw ExitCode(1)
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
        do {
            try requireScrapeTokens(topology, coordinator: coordinator)
        } catch {
            printError("error: the metrics endpoint's tokens: \(error)")
            throw ExitCode(1)
        }
        coordinator.start()
        let (escalations, escalate) = AsyncStream.makeStream(of: String.self)
        let supervisor = Supervisor(topology: topology, coordinator: coordinator, executableDirectory: Self.executableDirectory(),
                                    dataDirectory: dataDirectory(of: topology, besides: topologyDirectory),
                                    auditDirectory: topology.hasAuditedMachines ? topology.auditDirectory(besides: topologyDirectory) : nil,
                                    storePasswordFile: topology.storePasswordFile(besides: topologyDirectory),
                                    log: log, onEscalate: { reason in escalate.yield(reason) })
        let view: LiveView?
        do {
            view = try makeView(topology, coordinator: coordinator, log: log)
        } catch {
            printError("error: the live view cannot start: \(error)")
            throw ExitCode(1)
        }
        let service = TopologyService(topology: topology, coordinator: coordinator, supervisor: supervisor,
                                      readyTimeout: readyTimeout, view: view,
                                      topologyDirectory: topologyDirectory, log: log)
        // Whichever ends first (a signal, the topology failing to start, an escalation, the
        // parent gone) shuts the others down, last first: the topology stops last.
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = [
            .init(service: service, successTerminationBehavior: .gracefullyShutdownGroup, failureTerminationBehavior: .gracefullyShutdownGroup),
            .init(service: EscalationWatch(escalations: escalations), successTerminationBehavior: .gracefullyShutdownGroup,
                  failureTerminationBehavior: .gracefullyShutdownGroup),
        ]
        if let view {
            services.append(.init(service: view, successTerminationBehavior: .gracefullyShutdownGroup, failureTerminationBehavior: .gracefullyShutdownGroup))
        }
        if exitWithParent {
            services.append(.init(service: ParentWatch(parent: parent, log: log), successTerminationBehavior: .gracefullyShutdownGroup))
        }
        let group = ServiceGroup(configuration: ServiceGroupConfiguration(
            services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: log))
        // The coordinator's last spans leave before the process does.
        do {
            try await group.run()
            await traces?.finish()
        } catch let escalation as Escalation {
            await traces?.finish()
            printError("error: \(escalation.reason)")
            // Before the topology was ready, giving up fails the launch like any other reason.
            throw ExitCode(service.isReady ? Self.escalationStatus : 1)
        } catch {
            await traces?.finish()
            printError("error: \(error)")
            throw ExitCode(1)
        }
    }

    /// The exit status after a worker group gave up and escalated (`supervision.onGiveUp`).
    static let escalationStatus: Int32 = 3

    /// Where the topology's relative key file paths start: the topology file's folder.
    var topologyDirectory: URL? {
        topology.map { URL(fileURLWithPath: $0).deletingLastPathComponent() }
    }

    func loadTopology() throws -> Topology {
        do {
            guard let path = topology else { return try Topology.defaultTopology() }
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
