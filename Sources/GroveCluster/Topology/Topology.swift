/// Where every part of a Grove cluster runs: the coordinator's endpoints, the worker processes,
/// the machines they host, where io requests execute, how outputs become events of other
/// machines, and the heartbeat and queue settings.
///
/// Topologies are JSON files (see `Topologies/` and `docs/topology.schema.json`); load one with
/// ``load(contentsOf:)`` or ``init(json:source:)``, which validate it and report every problem at
/// once. Values built in code are not validated.
///
/// ```swift
/// let topology = try Topology.load(contentsOf: URL(filePath: "Topologies/default.json"))
/// topology.placement(ofMachine: "auth", key: nil)   // "main"
/// ```
public struct Topology: Sendable, Equatable {
    /// A name for people and logs, e.g. `"default"`.
    public var name: String
    /// The three endpoints the coordinator binds.
    public var coordinator: Endpoints
    /// The worker groups; each group runs one or more worker processes.
    public var workers: [WorkerGroup]
    /// The machines and the worker group that hosts each.
    public var machines: [MachineSpec]
    /// The io requests that run on a group other than the one of the machine that starts them.
    public var io: [IOPlacement]
    /// The outputs that become events of other machines.
    public var routes: [Route]
    /// How often processes prove they are alive, and when they count as dead.
    public var heartbeat: Heartbeat
    /// Capacities of the queues between and inside processes.
    public var queues: Queues
    /// io timeouts (the default; `io[]` entries may set their own) and concurrent io per worker.
    public var ioLimits: IOLimits
    /// Keys, client roles, or the explicit choice to run tcp without them.
    public var security: Security
    /// Where and how the durable machines are kept.
    public var durability: DurabilitySettings
    /// Where the audited machines' transitions are logged.
    public var audit: AuditSettings
    /// When crashes quarantine an event pattern or suspend a client key.
    public var poison: PoisonSettings
    /// What one peer may make the coordinator keep (`Topology+Limits.swift`).
    public var limits: Limits
    /// Where the coordinator serves Prometheus metrics; off unless set (`Topology+Metrics.swift`).
    public var metrics: MetricsSettings
    /// Where fsm-launch serves the live view; off unless set (`Topology+View.swift`).
    public var view: ViewSettings

    /// A topology from its parts. Not validated: prefer loading JSON.
    /// - Parameters:
    ///   - name: A name for people and logs.
    ///   - coordinator: The endpoints the coordinator binds.
    ///   - workers: The worker groups.
    ///   - machines: The machines and where they run.
    ///   - io: Placement of io requests; requests not listed run beside their machine.
    ///   - routes: Outputs forwarded as events.
    ///   - heartbeat: Heartbeat settings.
    ///   - queues: Queue capacities.
    ///   - ioLimits: io timeouts and concurrency.
    ///   - security: Keys and client roles.
    ///   - durability: Where and how durable machines are kept.
    ///   - audit: Where audited machines' transitions are logged.
    ///   - poison: When crashes quarantine an event pattern or suspend a client key.
    ///   - limits: Sizes checked before work, and bounds of what the coordinator keeps.
    ///   - metrics: Where the coordinator serves metrics (default: nowhere).
    ///   - view: Where fsm-launch serves the live view (default: nowhere).
    public init(
        name: String,
        coordinator: Endpoints,
        workers: [WorkerGroup],
        machines: [MachineSpec],
        io: [IOPlacement] = [],
        routes: [Route] = [],
        heartbeat: Heartbeat = Heartbeat(),
        queues: Queues = Queues(),
        ioLimits: IOLimits = IOLimits(),
        security: Security = Security(),
        durability: DurabilitySettings = DurabilitySettings(),
        audit: AuditSettings = AuditSettings(),
        poison: PoisonSettings = PoisonSettings(),
        limits: Limits = Limits(),
        metrics: MetricsSettings = MetricsSettings(),
        view: ViewSettings = ViewSettings()
    ) {
        self.name = name
        self.coordinator = coordinator
        self.workers = workers
        self.machines = machines
        self.io = io
        self.routes = routes
        self.heartbeat = heartbeat
        self.queues = queues
        self.ioLimits = ioLimits
        self.security = security
        self.durability = durability
        self.audit = audit
        self.poison = poison
        self.limits = limits
        self.metrics = metrics
        self.view = view
    }
}
