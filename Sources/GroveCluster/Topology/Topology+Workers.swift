extension Topology {
    /// A group of identical worker processes. A group with a ``count`` above 1 is a pool: keyed
    /// machine instances spread over its instances by key.
    public struct WorkerGroup: Sendable, Equatable {
        /// The executable started for a group that names none.
        public static let defaultExecutable = "fsm-worker"

        /// The bounds of ``count``. Each instance is a process `fsm-launch` starts and supervises
        /// and the coordinator holds a connection to (an open file each, of the 1,024 a process
        /// may have by default on Linux), and the decoder names every one before anything runs:
        /// a count past a thousand or so is a slip (a digit too many), not a plan, and bounding
        /// it keeps that naming, and the launch after it, from running away. A deployment that
        /// needs more splits the work over several groups.
        public static let countRange = 1...1024

        /// The group's name; also the instance name when ``count`` is 1.
        public var name: String
        /// How many worker processes the group runs; 1 to 1,024 (``countRange``). Defaults to 1.
        public var count: Int
        /// The worker executable: a path, or a name resolved next to `fsm-launch`.
        /// Defaults to `"fsm-worker"`.
        public var executable: String
        /// Extra arguments passed to every instance. Defaults to none.
        public var arguments: [String]
        /// `true` when `fsm-launch` does not start the group: its instances are started by hand
        /// (on another host, say) and register themselves. Defaults to `false`.
        public var external: Bool
        /// How `fsm-launch` restarts the group's processes; not used for an ``external`` group.
        public var supervision: Supervision
        /// The public key file (`NAME.key`) of the group's workers, when the topology uses CURVE:
        /// a registration under one of the group's names from any other key is refused. Required
        /// for an ``external`` group; a group `fsm-launch` starts gets a fresh key pair per
        /// process when it has none.
        public var key: String?
        /// Whether the group's workers serve direct routes (docs/DIRECT-ROUTES.md): clients that
        /// located a machine send its requests to the worker hosting it rather than through the
        /// coordinator. Defaults to `false`.
        public var direct: Bool

        /// - Parameters:
        ///   - name: The group's name.
        ///   - count: How many worker processes it runs.
        ///   - executable: The worker executable.
        ///   - arguments: Extra arguments for every instance.
        ///   - external: `true` when the instances are started by hand.
        ///   - supervision: How `fsm-launch` restarts the group's processes.
        ///   - key: The public key file of the group's workers.
        ///   - direct: Whether the group's workers serve direct routes.
        public init(
            name: String,
            count: Int = 1,
            executable: String = WorkerGroup.defaultExecutable,
            arguments: [String] = [],
            external: Bool = false,
            supervision: Supervision = Supervision(),
            key: String? = nil,
            direct: Bool = false
        ) {
            self.name = name
            self.count = count
            self.executable = executable
            self.arguments = arguments
            self.external = external
            self.supervision = supervision
            self.key = key
            self.direct = direct
        }

        /// The names of the group's instances: the group name when ``count`` is 1, otherwise
        /// `"<name>-1"` through `"<name>-<count>"`.
        @inlinable
        public var instanceNames: [String] {
            count == 1 ? [name] : (0..<max(count, 0)).map { "\(name)-\($0 + 1)" }
        }
    }

    /// One worker process of a group.
    public struct WorkerInstance: Sendable, Hashable {
        /// The instance's name, e.g. `"data-io-2"` (its routing id is another, per connection:
        /// docs/PROTOCOL.md, "Routing ids").
        public var name: String
        /// The name of its group, e.g. `"data-io"`.
        public var group: String
        /// Its position in the group, from 0; a pool instance's name ends in `index + 1`.
        public var index: Int

        /// - Parameters:
        ///   - name: The instance name.
        ///   - group: The group name.
        ///   - index: The position in the group, from 0.
        public init(name: String, group: String, index: Int) {
            self.name = name
            self.group = group
            self.index = index
        }
    }
}
