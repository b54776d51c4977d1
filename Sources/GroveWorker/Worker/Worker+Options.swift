public import ArgumentParser
import Foundation
import GroveCluster

extension Worker {
    /// Where a worker connects and who it is: what `fsm-launch` passes on the command line
    /// (`--name NAME --coordinator ENDPOINT [--exit-with-parent [--parent-pid PID]]`). An
    /// options group, so a worker executable with options of its own reads these with
    /// `@OptionGroup var worker: Worker.Options` and runs with ``Worker/main(_:options:)``.
    public struct Options: ParsableArguments, Sendable {
        // Optional underneath, so that a missing one is reported with what it is for (`validate`).
        @Option(name: .customLong("name"),
                help: ArgumentHelp("The worker instance name from the topology, e.g. data-io-2.", valueName: "NAME"))
        var nameArgument: String?
        @Option(name: .customLong("coordinator"),
                help: ArgumentHelp("The topology's coordinator.workers endpoint.", valueName: "ENDPOINT"))
        var coordinatorArgument: String?
        /// Exit when the process that started this one goes away (set by `fsm-launch`).
        @Flag(name: .customLong("exit-with-parent"), help: "Exit when the process that started this one goes away.")
        public var exitWithParent = false
        /// With `exitWithParent`: the parent's process id as the parent passed it (`fsm-launch`
        /// does), so a parent that ends before the worker first looks is noticed too. Without
        /// it, the parent is whoever it is when the worker starts.
        @Option(name: .customLong("parent-pid"), parsing: .unconditional,
                help: ArgumentHelp("With --exit-with-parent: the parent's process id.", valueName: "PID"))
        public var parentPid: Int32?
        /// This worker's secret key file for a coordinator that speaks CURVE, `-` for standard
        /// input (how `fsm-launch` hands over the pair it made); else `$GROVE_KEY_FILE`.
        @Option(name: .customLong("key-file"),
                help: ArgumentHelp("For a coordinator that speaks CURVE: this worker's NAME.key_secret, or - to read it from standard input.", valueName: "FILE"))
        public var keyFile: String?
        /// The coordinator's public key (a `.key` file or 40 Z85 characters); else
        /// `$GROVE_COORDINATOR_KEY`. Its next word whatever it looks like: a Z85 key may start
        /// with `-`.
        @Option(name: .customLong("coordinator-key"), parsing: .unconditional,
                help: ArgumentHelp("For a coordinator that speaks CURVE: its public key, a .key file or the 40 Z85 characters.", valueName: "KEY"))
        public var coordinatorKey: String?
        /// Where the worker keeps its store (`<dataDirectory>/<name>.sqlite`) once a durable
        /// machine is placed on it. `fsm-launch` passes the topology's (`durability.directory`);
        /// a worker started by hand defaults to `$XDG_STATE_HOME/grove`, else
        /// `~/.local/state/grove`.
        @Option(name: .customLong("data-dir"),
                help: ArgumentHelp("Where to keep the store of durable machines (default: $XDG_STATE_HOME/grove, else ~/.local/state/grove). fsm-launch passes the topology's.", valueName: "DIR"))
        var dataDirectoryArgument: String?
        /// Where the worker appends its audit log (`<auditDirectory>/<name>.jsonl`) once an
        /// audited machine is placed on it. `fsm-launch` passes the topology's
        /// (`audit.directory`); a worker started by hand defaults to `audit` in the standard
        /// data directory.
        @Option(name: .customLong("audit-dir"),
                help: ArgumentHelp("Where to append the audit log of audited machines (default: $XDG_STATE_HOME/grove/audit, else ~/.local/state/grove/audit). fsm-launch passes the topology's.", valueName: "DIR"))
        var auditDirectoryArgument: String?
        /// For a topology whose durable machines are in PostgreSQL (`durability.postgres`): a file
        /// of mode 0600 with the password on its first line. `fsm-launch` passes the
        /// topology's `durability.postgres.passwordFile`; else the worker reads
        /// `$GROVE_POSTGRES_PASSWORD`. The password itself never goes on a command line.
        @Option(name: .customLong("store-password-file"),
                help: ArgumentHelp("For a PostgreSQL store: a file (mode 0600) holding its password (default: $GROVE_POSTGRES_PASSWORD). fsm-launch passes the topology's.", valueName: "FILE"))
        public var storePasswordFile: String?
        /// Print the explored state graph of a machine made describable with
        /// ``WorkerConfiguration/checkable(_:as:)`` as JSON, and exit: what `fsm-check --worker`
        /// reads. The worker connects to nothing, so `--name` and `--coordinator` are not needed.
        @Option(name: .customLong("direct"),
                help: ArgumentHelp("Serve clients' requests directly on this endpoint as well (docs/DIRECT-ROUTES.md): ipc://PATH, or tcp://HOST:PORT (port 0: a free one). fsm-launch passes one to the workers of groups with \"direct\": true.", valueName: "ENDPOINT"))
        public var direct: String?
        @Option(name: .customLong("describe"),
                help: ArgumentHelp("Print the state graph of the machine type TYPE as JSON and exit (for fsm-check --worker).", valueName: "TYPE"))
        public var describe: String?
        /// Print the describable machine types as a JSON array of names, and exit.
        @Flag(name: .customLong("describe-machines"), help: "Print the describable machine types as a JSON array and exit.")
        public var describeMachines = false
        /// With `describe`: the most concrete states the walk visits (fsm-check's `--limit`).
        @Option(name: .customLong("describe-limit"),
                help: ArgumentHelp("With --describe: the most concrete states to visit (default 10000).", valueName: "N"))
        public var describeLimit: Int?

        /// `true` when the command line asks for a description (`--describe`,
        /// `--describe-machines`) rather than a worker: ``Worker/main(_:options:)`` answers it and exits.
        public var isDescribing: Bool { describe != nil || describeMachines }

        /// The worker instance name from the topology, e.g. `data-io-2`.
        public var name: String {
            get { nameArgument ?? "" }
            set { nameArgument = newValue }
        }

        /// The coordinator's workers endpoint, e.g. `ipc:///run/user/1000/grove/default/workers`.
        public var coordinator: String {
            get { coordinatorArgument ?? "" }
            set { coordinatorArgument = newValue }
        }

        /// The data directory, absolute: `--data-dir` (relative to the current directory), else
        /// ``DataDirectory/standard(environment:)``.
        public var dataDirectory: String {
            get {
                guard let dataDirectoryArgument else { return DataDirectory.standard().path }
                return URL(fileURLWithPath: dataDirectoryArgument).standardizedFileURL.path
            }
            set { dataDirectoryArgument = newValue }
        }

        /// The audit directory, absolute: `--audit-dir` (relative to the current directory), else
        /// `audit` in ``DataDirectory/standard(environment:)``.
        public var auditDirectory: String {
            get {
                guard let auditDirectoryArgument else { return DataDirectory.standard().appendingPathComponent("audit").path }
                return URL(fileURLWithPath: auditDirectoryArgument).standardizedFileURL.path
            }
            set { auditDirectoryArgument = newValue }
        }

        /// Options to be filled in by parsing.
        public init() {}

        /// Options given in code. Every option is set: ArgumentParser's wrappers hold a value only
        /// once parsed or assigned, and reading one that holds none traps. Assigned on a copy:
        /// in an initializer, `self.exitWithParent = …` would make a new, unparsed `@Flag`.
        public init(name: String, coordinator: String, exitWithParent: Bool = false, parentPid: Int32? = nil,
                    dataDirectory: String? = nil, auditDirectory: String? = nil, keyFile: String? = nil,
                    coordinatorKey: String? = nil, storePasswordFile: String? = nil) {
            var options = Self()
            options.nameArgument = name
            options.coordinatorArgument = coordinator
            options.exitWithParent = exitWithParent
            options.parentPid = parentPid
            options.dataDirectoryArgument = dataDirectory
            options.auditDirectoryArgument = auditDirectory
            options.keyFile = keyFile
            options.coordinatorKey = coordinatorKey
            options.storePasswordFile = storePasswordFile
            options.direct = nil
            options.describe = nil
            options.describeMachines = false
            options.describeLimit = nil
            self = options
        }

        /// Reads `--name NAME --coordinator ENDPOINT [--exit-with-parent [--parent-pid PID]]`.
        /// - Throws: ``WorkerUsageError`` naming the missing, unknown or bad argument; an empty
        ///   message when help was asked for.
        public init(arguments: [String]) throws(WorkerUsageError) {
            do {
                self = try Self.parse(arguments)
            } catch {
                guard Self.exitCode(for: error) != .success else { throw WorkerUsageError(message: "") }
                let message = Self.message(for: error)
                throw WorkerUsageError(message: message.isEmpty ? "\(error)" : message)
            }
        }

        public mutating func validate() throws {
            if let describeLimit, describeLimit < 1 {
                throw ValidationError("--describe-limit needs a number of states of at least 1, got \(describeLimit)")
            }
            if isDescribing {
                guard describe == nil || !describeMachines else {
                    throw ValidationError("choose one of --describe TYPE and --describe-machines")
                }
                guard describe?.isEmpty != true else { throw ValidationError("--describe needs a machine type, e.g. --describe Checkout") }
                return  // a description connects to nothing: no name or coordinator needed
            }
            if describeLimit != nil { throw ValidationError("--describe-limit only means something with --describe TYPE") }
            guard let nameArgument, !nameArgument.isEmpty else {
                throw ValidationError("missing --name NAME (the worker instance name from the topology)")
            }
            guard let coordinatorArgument, !coordinatorArgument.isEmpty else {
                throw ValidationError("missing --coordinator ENDPOINT (the topology's coordinator.workers endpoint)")
            }
            if let dataDirectoryArgument, dataDirectoryArgument.isEmpty {
                throw ValidationError("--data-dir needs a directory, e.g. --data-dir /var/lib/grove")
            }
            if let direct, !(direct.hasPrefix("ipc://") || direct.hasPrefix("tcp://")) || direct == "ipc://" || direct == "tcp://" {
                throw ValidationError("--direct needs an ipc:// or tcp:// endpoint, e.g. --direct tcp://10.0.0.2:0, got '\(direct)'")
            }
            if let auditDirectoryArgument, auditDirectoryArgument.isEmpty {
                throw ValidationError("--audit-dir needs a directory, e.g. --audit-dir /var/log/grove")
            }
            if let parentPid {
                guard parentPid > 0 else { throw ValidationError("--parent-pid needs a process id (a positive number)") }
                guard exitWithParent else { throw ValidationError("--parent-pid only means something with --exit-with-parent") }
            }
        }
    }

    /// A worker command line that could not be read.
    public struct WorkerUsageError: Error, CustomStringConvertible {
        /// What is wrong; empty when help was asked for.
        public var message: String
        public var description: String {
            (message.isEmpty ? "" : "error: \(message)\n")
                + "usage: \(URL(fileURLWithPath: CommandLine.arguments.first ?? "worker").lastPathComponent) \(Worker.usage)\n"
                + "Usually started by fsm-launch; start it by hand for workers marked \"external\" in the topology."
                + (message.isEmpty ? "\n\n" + WorkerExitStatus.help : "")
        }
    }

    /// The options every worker reads, as a usage line (without the program's name).
    public static let usage = "--name NAME --coordinator ENDPOINT [--exit-with-parent [--parent-pid PID]] [--key-file FILE --coordinator-key KEY] [--data-dir DIR] [--audit-dir DIR] [--store-password-file FILE] [--direct ENDPOINT] [--describe TYPE [--describe-limit N] | --describe-machines]"
}
