public import Foundation
public import GroveWire

extension Topology {
    /// Where and how workers keep their durable machines (`"durability"` in a topology); only
    /// machines whose ``MachineSpec/durability`` is not `none` are stored.
    public struct DurabilitySettings: Sendable, Equatable {
        /// The data directory as written, relative to the topology file; `nil` for the default,
        /// `grove-data/<topology name>` beside the topology file. See ``dataDirectory(of:besides:)``.
        public var directory: String?
        /// For `journal` machines: a state snapshot every this many events (the journal is
        /// truncated then), 1 to 1,000,000. Defaults to 1000.
        public var snapshotEvery: Int
        /// When a commit counts as done. Defaults to `process`.
        public var flush: DurabilityFlush

        /// A PostgreSQL database every worker shares (`durability.postgres`), instead of each
        /// worker's SQLite file in ``directory``.
        public var postgres: Postgres?

        /// How long a lost worker of a pool keeps its keyed instances before the pool's other
        /// workers adopt them from the shared store (`durability.handoff`); `nil`: never, they
        /// wait for that worker. Only with ``postgres``.
        public var handoff: Handoff?

        /// The bounds of ``snapshotEvery``.
        public static let snapshotRange = 1...1_000_000

        /// - Parameters:
        ///   - directory: The data directory, relative to the topology file; `nil` for the default.
        ///   - snapshotEvery: Events between snapshots of a `journal` machine.
        ///   - flush: When a commit counts as done.
        ///   - postgres: The shared PostgreSQL store; `nil` for SQLite.
        public init(directory: String? = nil, snapshotEvery: Int = 1000, flush: DurabilityFlush = .process,
                    postgres: Postgres? = nil, handoff: Handoff? = nil) {
            self.directory = directory
            self.snapshotEvery = snapshotEvery
            self.flush = flush
            self.postgres = postgres
            self.handoff = handoff
        }

        /// When a pool's keyed instances move off a lost worker (`durability.handoff`).
        public struct Handoff: Sendable, Equatable {
            /// How long a pool instance may stay unregistered before its keyed durable
            /// instances are placed on the pool's live instances, 1 to ``longestGraceMs``.
            public var graceMs: Int

            /// The longest grace period: an hour. Longer is waiting for the worker, which no
            /// handoff setting says.
            public static let longestGraceMs = 3_600_000

            public init(graceMs: Int) {
                self.graceMs = graceMs
            }
        }

        /// Where the shared store is: its URL (no password) and where the workers fsm-launch
        /// starts read the password.
        public struct Postgres: Sendable, Equatable {
            /// `postgres://user@host:port/database`, checked by ``PostgresLocation``.
            public var url: String
            /// The password file as written, relative to the topology file; `nil`: the workers
            /// read ``PostgresLocation/passwordVariable`` from their environment.
            public var passwordFile: String?

            public init(url: String, passwordFile: String? = nil) {
                self.url = url
                self.passwordFile = passwordFile
            }
        }
    }

    /// The PostgreSQL store's password file, absolute (taken from `topologyDirectory`, the
    /// topology file's folder, else the current directory); nil when the topology names none.
    public func storePasswordFile(besides topologyDirectory: URL?) -> URL? {
        guard let relative = durability.postgres?.passwordFile else { return nil }
        if relative.hasPrefix("/") { return URL(fileURLWithPath: relative).standardizedFileURL }
        if relative.hasPrefix("~/") { return URL(fileURLWithPath: NSString(string: relative).expandingTildeInPath).standardizedFileURL }
        let base = topologyDirectory ?? URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
        return base.appendingPathComponent(relative).standardizedFileURL
    }

    /// What keeps the PostgreSQL store from being used as the topology names it: a password
    /// file that is missing, empty or open to others. Checked by fsm-launch before it starts a
    /// worker, which would fail on it at its first durable machine. Empty for SQLite.
    public func storeProblems(besides topologyDirectory: URL?) -> [String] {
        guard let postgres = durability.postgres else { return [] }
        do throws(PostgresLocation.Problem) {
            _ = try PostgresLocation(url: postgres.url, passwordFile: storePasswordFile(besides: topologyDirectory)?.path)
            return []
        } catch {
            return ["$.durability.postgres.passwordFile: \(error.message)"]
        }
    }

    /// Whether the keyed instances of machine `spec` move to another worker of its group when
    /// theirs is lost past ``DurabilitySettings/Handoff/graceMs``: a durable keyed machine on a
    /// pool (a group of more than one instance), with the shared store and a handoff set.
    public func handsOff(_ spec: MachineSpec) -> Bool {
        guard durability.handoff != nil, durability.postgres != nil, spec.keyed, spec.durability != .none else { return false }
        return instances(of: spec.worker).count > 1
    }

    /// Whether any machine keeps more than nothing.
    public var hasDurableMachines: Bool { machines.contains { $0.durability != .none } }

    /// The absolute data directory of this topology's workers: ``DurabilitySettings/directory``
    /// taken from `topologyDirectory` (the topology file's folder), by default
    /// `<topologyDirectory>/grove-data/<name>`. A topology without a file (the embedded default)
    /// keeps its data under ``DataDirectory/standard()``, in `<name>`.
    /// - Parameter topologyDirectory: The folder of the topology file; `nil` when there is none.
    public func dataDirectory(besides topologyDirectory: URL?) -> URL {
        let base = topologyDirectory ?? DataDirectory.standard()
        let relative = durability.directory ?? (topologyDirectory == nil ? name : "grove-data/\(name)")
        if relative.hasPrefix("/") { return URL(fileURLWithPath: relative).standardizedFileURL }
        let expanded = relative.hasPrefix("~/") ? NSString(string: relative).expandingTildeInPath : nil
        if let expanded { return URL(fileURLWithPath: expanded).standardizedFileURL }
        return base.appendingPathComponent(relative).standardizedFileURL
    }
}

/// Where Grove keeps data when nothing says where.
public enum DataDirectory {
    /// `$XDG_STATE_HOME/grove`, else `~/.local/state/grove`: a worker started by hand without
    /// `--data-dir` keeps its store there.
    public static func standard(environment: [String: String] = ProcessInfo.processInfo.environment) -> URL {
        if let state = environment["XDG_STATE_HOME"], state.hasPrefix("/") {
            return URL(fileURLWithPath: state).appendingPathComponent("grove")
        }
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        return URL(fileURLWithPath: home).appendingPathComponent(".local/state/grove")
    }
}
