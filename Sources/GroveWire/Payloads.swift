/// The JSON payloads of protocol v1 other than events and states, which are the machines' own
/// Codable forms. Field names are part of the protocol (docs/PROTOCOL.md).

/// `register`: a worker announces itself and what it can host.
@_spi(GroveInternal) public struct Registration: Codable, Sendable, Hashable {
    /// The worker instance name, e.g. `data-io-2`; also its ZeroMQ routing id.
    public var worker: String
    public var pid: Int32
    /// Machine type names this worker can host.
    public var machineTypes: [String]
    /// io request names this worker has handlers for.
    public var ioHandlers: [String]
    /// The worker process's incarnation: a random number it chose at start, so the coordinator
    /// tells a process that comes back (same incarnation) from one that replaced it. Absent from
    /// an older worker.
    public var incarnation: UInt64?
    /// When the process started, in milliseconds since 1970 (wall clock): of two incarnations
    /// under one name, the one started later is the newer. Absent from an older worker.
    public var startedAtMs: Int64?
    /// The event the worker's previous process died running, as its flight recorder kept it:
    /// sent with the registrations of a new process until its first welcome, so that the
    /// coordinator attributes the crash before it welcomes the process. Absent when the last
    /// process ended between events, and from an older worker.
    public var crash: CrashReport?
    /// The endpoint the worker serves direct requests on (docs/DIRECT-ROUTES.md), as bound;
    /// what `locate` names for it. Absent from a worker without one, and from an older worker.
    public var direct: String?

    public init(worker: String, pid: Int32, machineTypes: [String], ioHandlers: [String],
                incarnation: UInt64? = nil, startedAtMs: Int64? = nil, crash: CrashReport? = nil, direct: String? = nil) {
        self.crash = crash
        self.direct = direct
        self.worker = worker
        self.pid = pid
        self.machineTypes = machineTypes
        self.ioHandlers = ioHandlers
        self.incarnation = incarnation
        self.startedAtMs = startedAtMs
    }
}

/// `welcome`: what the coordinator wants the worker to host, and where io requests run.
@_spi(GroveInternal) public struct Welcome: Codable, Sendable, Hashable {
    /// One machine (or family of keyed instances) placed on the worker.
    public struct HostedMachine: Codable, Sendable, Hashable {
        public var name: String
        public var type: String
        public var keyed: Bool
        /// What of each instance the worker keeps in its store; absent (from an older
        /// coordinator, or for `none`) means nothing.
        public var durability: Durability?
        /// What becomes of an instance that ends; absent (from an older coordinator, or for
        /// `stay`) means it stays ended.
        public var onEnd: EndPolicy?
        /// How an instance is restarted when `onEnd` is `restart`; absent (from an older
        /// coordinator, or for the defaults) means ``RestartPolicy``'s defaults.
        public var restart: RestartPolicy?
        /// Milliseconds a keyed instance may sit idle before it leaves the worker's memory
        /// (passivation); absent (from an older coordinator, or not set) means never.
        public var passivateAfterMs: Int?
        /// Whether its keyed instances may be handed off between the workers of its pool
        /// (`durability.handoff`): a worker claims each one from the shared store when it
        /// starts it; absent means no.
        public var handoff: Bool?
        public init(name: String, type: String, keyed: Bool, durability: Durability? = nil, onEnd: EndPolicy? = nil,
                    restart: RestartPolicy? = nil, passivateAfterMs: Int? = nil, handoff: Bool? = nil) {
            self.handoff = handoff
            self.name = name
            self.type = type
            self.keyed = keyed
            self.durability = durability
            self.onEnd = onEnd
            self.restart = restart
            self.passivateAfterMs = passivateAfterMs
        }
    }

    /// The event a topology route sends to a machine placed on the worker, for the worker to
    /// check against the machine's type when it is welcomed (a typo then shows at launch, with
    /// its place in the topology, not when the route first fires).
    public struct RouteEvent: Codable, Sendable, Hashable {
        /// The receiving machine's name.
        public var machine: String
        public var event: JSONValue
        /// Where the event is in the topology file, e.g. `$.routes[0].event`.
        public var path: String
        public init(machine: String, event: JSONValue, path: String) {
            self.machine = machine
            self.event = event
            self.path = path
        }
    }

    public var machines: [HostedMachine]
    /// io request names that run on other workers: the worker sends these to the coordinator.
    /// Everything else runs on the worker's own handlers.
    public var remoteIO: [String]
    public var heartbeatIntervalMs: Int
    public var heartbeatTimeoutMs: Int
    public var mailboxCapacity: Int
    /// The events routes send to machines placed on the worker (absent from an older
    /// coordinator's welcome).
    public var routeEvents: [RouteEvent]?
    /// For `journal` machines: a state snapshot every this many events (the topology's
    /// `durability.snapshotEvery`); absent when no machine here is durable.
    public var snapshotEvery: Int?
    /// When a commit counts as done (the topology's `durability.flush`); absent when no machine
    /// here is durable.
    public var flush: DurabilityFlush?
    /// The coordinator's epoch: a random number chosen each time a coordinator starts, which
    /// makes bits 40–62 of every correlation id it sends to workers (see
    /// ``CorrelationEpoch``). A new epoch in a welcome means the coordinator restarted: replies
    /// to requests of the old one are dropped. Absent from an older coordinator.
    public var epoch: UInt64?
    /// The incarnation of this worker that the coordinator registered (the registration's).
    public var incarnation: UInt64?
    /// The machines placed here whose transitions go to the worker's audit log; absent when none
    /// is audited (and from an older coordinator).
    public var audit: AuditPlacement?
    /// The timeout of the io requests that run on the worker's own handlers, in milliseconds
    /// (the topology's `ioLimits.timeoutMs`); absent from an older coordinator: 30000.
    public var ioTimeoutMs: Int?
    /// The io requests placed on the worker's own group whose `io[]` entry sets a `timeoutMs`
    /// of its own, by name; absent when none does.
    public var localIOTimeoutsMs: [String: Int]?
    /// The event patterns quarantined for every address after crashing workers, as far as
    /// they concern machine types placed here; absent when none is (and from an older
    /// coordinator). Later changes come as `quarantine` messages.
    public var quarantined: [PoisonPattern]?
    /// The largest frame the coordinator accepts from the worker (the topology's
    /// `limits.messageBytes`): ZeroMQ drops a worker's connection when it sends a larger one,
    /// so the worker never does (a reply too large is answered `reply-too-large` instead).
    /// Absent from an older coordinator: 16 MiB, the default.
    public var messageBytes: Int?
    /// The most envelopes one batch between the coordinator and the worker may hold, either way
    /// (the topology's `limits.batchEnvelopes`): each side refuses a larger batch from its header
    /// before reading an envelope, and cuts its own batches at it. Absent from an older
    /// coordinator: 10,000, the default.
    public var batchEnvelopes: Int?
    /// Whether the topology serves metrics: then the worker's heartbeats carry what it counted
    /// (``MetricsReport``). Absent: no metrics.
    public var metrics: Bool?
    /// Where the worker keeps its durable machines when not in its own SQLite file (the
    /// topology's `durability.postgres`); absent: SQLite. Never a password: the worker reads that
    /// on its own host.
    public var store: SharedStore?
    /// What the worker needs to serve direct routes (docs/DIRECT-ROUTES.md): present only when
    /// it registered a direct endpoint and its group's topology entry has `direct` on. Absent:
    /// it answers every direct request `moved` (`not-registered`).
    public var direct: DirectSettings?

    public init(machines: [HostedMachine], remoteIO: [String], heartbeatIntervalMs: Int, heartbeatTimeoutMs: Int, mailboxCapacity: Int,
                routeEvents: [RouteEvent]? = nil, snapshotEvery: Int? = nil, flush: DurabilityFlush? = nil,
                epoch: UInt64? = nil, incarnation: UInt64? = nil, audit: AuditPlacement? = nil,
                ioTimeoutMs: Int? = nil, localIOTimeoutsMs: [String: Int]? = nil, messageBytes: Int? = nil) {
        self.messageBytes = messageBytes
        self.ioTimeoutMs = ioTimeoutMs
        self.localIOTimeoutsMs = localIOTimeoutsMs
        self.epoch = epoch
        self.incarnation = incarnation
        self.machines = machines
        self.remoteIO = remoteIO
        self.heartbeatIntervalMs = heartbeatIntervalMs
        self.heartbeatTimeoutMs = heartbeatTimeoutMs
        self.mailboxCapacity = mailboxCapacity
        self.routeEvents = routeEvents
        self.snapshotEvery = snapshotEvery
        self.flush = flush
        self.audit = audit
    }

    /// Whether any machine placed here keeps more than nothing: only then does the worker open
    /// its store.
    public var hasDurableMachines: Bool {
        machines.contains { ($0.durability ?? .none) != .none }
    }
}

/// A store that workers share: PostgreSQL at `postgres` (a URL without a password), rows of
/// the topology `topology`.
@_spi(GroveInternal) public struct SharedStore: Codable, Sendable, Hashable {
    public var postgres: String
    public var topology: String

    public init(postgres: String, topology: String) {
        self.postgres = postgres
        self.topology = topology
    }
}

/// `observe`: the topic prefixes the coordinator's watchers subscribe to. A worker publishes a
/// machine's state changes only when `state:<address>` starts with one of them.
@_spi(GroveInternal) public struct Observation: Codable, Sendable, Hashable {
    public var prefixes: [String]
    public init(prefixes: [String]) { self.prefixes = prefixes }

    /// Whether a publication on `topic` reaches any subscriber.
    public func watches(_ topic: String) -> Bool {
        prefixes.contains { topic.hasPrefix($0) }
    }
}

/// `state-changed`, published on topic `state:<address>`.
public struct StateChange: Codable, Sendable, Hashable {
    public var address: String
    public var worker: String
    public var state: JSONValue

    public init(address: String, worker: String, state: JSONValue) {
        self.address = address
        self.worker = worker
        self.state = state
    }
}

/// `effect`, published on topic `effect:<address>`: the lifecycle of one io effect.
public struct EffectEvent: Codable, Sendable, Hashable {
    public enum Phase: String, Codable, Sendable, Hashable {
        /// Sent to the worker that runs it.
        case started
        /// A response came back and was delivered to the machine's worker.
        case completed
        /// A failure came back.
        case failed
        /// Cancelled (by id, replaced, terminal state, stop; `reason` says which), published once
        /// the worker running it said its task ended (`task` says how), or was lost.
        case cancelled
        /// The worker running it, or the machine's worker, went away.
        case lost
    }

    public var address: String
    public var effect: JSONValue
    public var request: String
    /// The worker running the request.
    public var worker: String
    public var phase: Phase
    public var reason: String?
    /// On `cancelled`: what became of the task on the worker running it (``IOCancelAnswer/TaskFate``).
    public var task: IOCancelAnswer.TaskFate?
    /// On `cancelled` with `task` `ended`: when it ended, on that worker's `CLOCK_MONOTONIC`
    /// (nanoseconds; comparable only on the same host).
    public var taskEndedAtNs: UInt64?

    public init(address: String, effect: JSONValue, request: String, worker: String, phase: Phase, reason: String? = nil,
                task: IOCancelAnswer.TaskFate? = nil, taskEndedAtNs: UInt64? = nil) {
        self.address = address
        self.effect = effect
        self.request = request
        self.worker = worker
        self.phase = phase
        self.reason = reason
        self.task = task
        self.taskEndedAtNs = taskEndedAtNs
    }
}

/// `worker`, published on topic `worker:<name>`.
public struct WorkerEvent: Codable, Sendable, Hashable {
    public enum Phase: String, Codable, Sendable, Hashable { case registered, lost }
    public var worker: String
    public var phase: Phase
    public var reason: String?
    /// Machine addresses that became unavailable (on `lost`).
    public var machines: [String]

    public init(worker: String, phase: Phase, reason: String? = nil, machines: [String] = []) {
        self.worker = worker
        self.phase = phase
        self.reason = reason
        self.machines = machines
    }
}

/// `machine`, published on topic `machine:<address>`: the machine ended and accepts no more
/// events (later ones get `machine-ended`).
public struct MachineEnded: Codable, Sendable, Hashable {
    public enum Reason: String, Codable, Sendable, Hashable {
        /// It entered a terminal state.
        case terminalState = "terminal-state"
        /// It was stopped (`stop`).
        case stopped
        /// An effect failed under the `.fail` policy.
        case failed
    }

    public var address: String
    public var worker: String
    public var reason: Reason
    /// The state it ended in.
    public var state: JSONValue
    /// For `failed`: what failed.
    public var message: String?

    public init(address: String, worker: String, reason: Reason, state: JSONValue, message: String? = nil) {
        self.address = address
        self.worker = worker
        self.reason = reason
        self.state = state
        self.message = message
    }
}

/// `output`: a machine emitted an output; the coordinator applies the topology's routes.
public struct OutputEvent: Codable, Sendable, Hashable {
    public var output: JSONValue
    public init(output: JSONValue) { self.output = output }
}

/// `listing`: the reply to `list`.
public struct Listing: Codable, Sendable, Hashable {
    public struct Machine: Codable, Sendable, Hashable {
        public var name: String
        public var type: String
        public var keyed: Bool
        /// The worker group, and for a non-keyed machine the instance hosting it.
        public var worker: String
        /// Keyed instances spawned so far, in byte order: at most ``ListRequest/pageSize`` of
        /// them, from the first (or after the one a ``ListRequest`` names).
        public var instances: [String]
        /// How many keyed instances there are in all (``instances`` may hold only a page).
        public var instanceCount: Int
        public var available: Bool
        public init(name: String, type: String, keyed: Bool, worker: String, instances: [String], instanceCount: Int? = nil,
                    available: Bool) {
            self.name = name
            self.type = type
            self.keyed = keyed
            self.worker = worker
            self.instances = instances
            self.instanceCount = instanceCount ?? instances.count
            self.available = available
        }
    }

    public struct Worker: Codable, Sendable, Hashable {
        public var name: String
        public var group: String
        public var registered: Bool
        public var pid: Int32?
        public init(name: String, group: String, registered: Bool, pid: Int32?) {
            self.name = name
            self.group = group
            self.registered = registered
            self.pid = pid
        }
    }

    public var topology: String
    /// The coordinator's process id.
    public var coordinatorPid: Int32?
    /// The events endpoint as bound (subscribe for `state:`, `effect:`, `output:`, `route:` and
    /// `worker:` topics). A wildcard host (`tcp://0.0.0.0:5557`) means: the coordinator's host.
    public var events: String
    /// The workers endpoint as bound, for starting external workers.
    public var workersEndpoint: String?
    public var machines: [Machine]
    public var workers: [Worker]

    public init(topology: String, coordinatorPid: Int32? = nil, events: String, workersEndpoint: String? = nil,
                machines: [Machine], workers: [Worker]) {
        self.topology = topology
        self.coordinatorPid = coordinatorPid
        self.workersEndpoint = workersEndpoint
        self.events = events
        self.machines = machines
        self.workers = workers
    }
}

/// `list`'s optional payload: the next page of one keyed machine's instances. A listing holds
/// at most ``pageSize`` instances per machine (a reply of 100,000 keys of 1 KiB stalled the
/// coordinator for seconds); `instanceCount` says how many there are.
public struct ListRequest: Codable, Sendable, Hashable {
    /// Instances per machine in one listing.
    public static let pageSize = 1000

    /// The keyed machine to page through; the others are listed without instances.
    public var machine: String
    /// The last instance of the previous page; `nil` for the first page.
    public var after: String?

    public init(machine: String, after: String? = nil) {
        self.machine = machine
        self.after = after
    }
}
