/// The keys of every object a topology file holds: the decoder reads exactly these, and
/// `TopologySchemaTests` holds `docs/topology.schema.json` to the same; the rest of the schema
/// (types, enums, bounds, required keys, defaults) is held to the decoder by
/// `TopologySchemaConformanceTests`, so the file's descriptions cannot drift apart unnoticed.
enum TopologyKeys {
    static let root = ["name", "coordinator", "workers", "machines", "io", "routes", "heartbeat", "queues", "ioLimits", "security", "durability", "audit", "poison", "limits", "metrics", "view"]
    static let coordinator = ["clients", "workers", "events"]
    static let workerGroup = ["name", "count", "executable", "arguments", "external", "supervision", "key", "direct"]
    static let supervision = ["intensity", "periodMs", "backoff", "finalExitCodes", "onGiveUp"]
    static let backoff = ["initialMs", "maxMs", "resetAfterMs"]
    static let machine = ["name", "type", "worker", "keyed", "durability", "audit", "onEnd", "restart", "passivateAfterMs"]
    static let machineRestart = ["intensity", "periodMs", "backoff"]
    static let machineBackoff = ["initialMs", "maxMs"]
    static let ioPlacement = ["request", "worker", "timeoutMs", "machines"]
    static let route = ["from", "when", "to", "event"]
    static let heartbeat = ["intervalMs", "timeoutMs"]
    static let ioLimits = ["timeoutMs", "concurrentPerWorker"]
    static let queues = ["mailboxCapacity", "workerOutbox", "workerOutboxBytes", "clientOutbox", "clientOutboxBytes", "watcherOutbox", "watcherOutboxBytes"]
    static let security = ["insecure", "coordinatorKey", "clients"]
    static let clientGrant = ["key", "roles", "machines"]
    static let durability = ["directory", "snapshotEvery", "flush", "postgres", "handoff"]
    static let durabilityPostgres = ["url", "passwordFile"]
    static let durabilityHandoff = ["graceMs"]
    static let audit = ["directory", "states", "flush"]
    static let poison = ["quarantineAfter", "suspendAfter", "periodMs"]
    static let metrics = ["listen", "requireToken"]
    static let view = ["listen"]
    static let limits = ["addressBytes", "payloadBytes", "messageBytes", "batchEnvelopes", "instancesPerMachine", "watcherSubscriptions", "subscriptions",
                         "owedBytesPerClient", "owedBytes", "watchedStateBytes", "publicationBytes"]

    /// Each object by where it stands in a topology (`[]` for every element of an array).
    static let byPlace: [String: [String]] = [
        "$": root, "$.coordinator": coordinator, "$.workers[]": workerGroup, "$.workers[].supervision": supervision,
        "$.workers[].supervision.backoff": backoff, "$.machines[]": machine,
        "$.machines[].restart": machineRestart, "$.machines[].restart.backoff": machineBackoff, "$.io[]": ioPlacement, "$.routes[]": route,
        "$.heartbeat": heartbeat, "$.queues": queues, "$.ioLimits": ioLimits, "$.security": security, "$.security.clients[]": clientGrant,
        "$.durability": durability, "$.durability.postgres": durabilityPostgres, "$.durability.handoff": durabilityHandoff, "$.audit": audit, "$.poison": poison, "$.limits": limits,
        "$.metrics": metrics, "$.view": view,
    ]
}
