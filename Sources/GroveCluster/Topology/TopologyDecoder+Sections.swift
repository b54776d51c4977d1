import GroveWire

extension TopologyDecoder {
    /// The names declared in one section, to check references against.
    struct KnownNames {
        /// Names in declaration order.
        var order: [String] = []
        /// Where each name is declared first.
        var paths: [String: JSONPath] = [:]
        /// `false` when the section itself is unusable (not an array): every reference would be
        /// unknown, so none is reported.
        var complete = true

        func contains(_ name: String) -> Bool { paths[name] != nil }
    }

    /// The topology in `document`, or `nil` when ``issues`` holds at least one problem.
    mutating func decodeTopology(_ document: JSONValue) -> Topology? {
        guard let root = members(
            of: document, at: .root, known: TopologyKeys.root, ignoring: ["$schema"],
            what: "a topology (a JSON object with name, workers and machines)"
        ) else { return nil }
        let name = requiredText(Field("name", "\"default\"", "a name for the topology"), in: root, at: .root)
        let coordinator = decodeEndpoints(in: root, name: name)
        let workers = decodeWorkers(in: root)
        let machines = decodeMachines(in: root, groups: workers.names)
        let io = decodeIO(in: root, groups: workers.names, machines: machines.names)
        let routes = decodeRoutes(in: root, machines: machines.names, keyed: machines.keyed)
        let heartbeat = decodeHeartbeat(in: root)
        let queues = decodeQueues(in: root)
        let ioLimits = decodeIOLimits(in: root)
        let security = decodeSecurity(in: root, endpoints: coordinator, workers: workers.groups)
        let durability = decodeDurabilitySettings(in: root)
        let audit = decodeAuditSettings(in: root)
        let poison = decodePoisonSettings(in: root)
        let limits = decodeLimits(in: root)
        let metrics = decodeMetricsSettings(in: root, curve: security?.usesCurve ?? false)
        let view = decodeViewSettings(in: root)
        guard issues.isEmpty, let name, let coordinator, let heartbeat, let queues, let ioLimits, let security, let durability, let audit,
              let poison, let limits, let metrics, let view else {
            return nil
        }
        return Topology(
            name: name, coordinator: coordinator, workers: workers.groups, machines: machines.specs,
            io: io, routes: routes, heartbeat: heartbeat, queues: queues, ioLimits: ioLimits, security: security, durability: durability,
            audit: audit, poison: poison, limits: limits, metrics: metrics, view: view
        )
    }

    // MARK: - Heartbeat and queues

    private mutating func decodeHeartbeat(in root: [String: JSONValue]) -> Topology.Heartbeat? {
        let defaults = Topology.Heartbeat()
        guard let value = root["heartbeat"] else { return defaults }
        let path = JSONPath.root.appending("heartbeat")
        guard let members = members(
            of: value, at: path, known: TopologyKeys.heartbeat,
            what: "an object like { \"intervalMs\": 250, \"timeoutMs\": 1500 }"
        ) else { return nil }
        let interval = optionalCount(
            Field("intervalMs", "250", "the milliseconds between heartbeats"),
            in: members, at: path, default: defaults.intervalMs, minimum: 1
        )
        let timeout = optionalCount(
            Field("timeoutMs", "1500", "the milliseconds of silence after which a process counts as dead"),
            in: members, at: path, default: defaults.timeoutMs, minimum: 1
        )
        guard let interval, let timeout else { return nil }
        guard timeout > interval else {
            report(.invalidValue, path.appending("timeoutMs"), "timeoutMs (\(timeout)) must be greater than intervalMs (\(interval)); allow a few missed heartbeats, e.g. \(interval * 6)")
            return nil
        }
        return Topology.Heartbeat(intervalMs: interval, timeoutMs: timeout)
    }

    private mutating func decodeQueues(in root: [String: JSONValue]) -> Topology.Queues? {
        let defaults = Topology.Queues()
        guard let value = root["queues"] else { return defaults }
        let path = JSONPath.root.appending("queues")
        guard let members = members(
            of: value, at: path, known: TopologyKeys.queues,
            what: "an object like { \"mailboxCapacity\": 1024, \"workerOutbox\": 10000, \"clientOutbox\": 10000, \"clientOutboxBytes\": 16777216, \"watcherOutbox\": 100000 }"
        ) else { return nil }
        let mailbox = optionalCount(
            Field("mailboxCapacity", "1024", "the events a machine instance may have waiting"),
            in: members, at: path, default: defaults.mailboxCapacity, minimum: 1
        )
        let workerOutbox = optionalCount(
            Field("workerOutbox", "10000", "the requests one worker may have unanswered"),
            in: members, at: path, default: defaults.workerOutbox, minimum: 1
        )
        let workerOutboxBytes = optionalCount(
            Field("workerOutboxBytes", "67108864", "the bytes of one worker's unanswered requests and their expected replies"),
            in: members, at: path, default: defaults.workerOutboxBytes, minimum: 1
        )
        let clientOutbox = optionalCount(
            Field("clientOutbox", "10000", "the replies the coordinator holds for one client"),
            in: members, at: path, default: defaults.clientOutbox, minimum: 1
        )
        let clientOutboxBytes = optionalCount(
            Field("clientOutboxBytes", "16777216", "the bytes of the replies the coordinator holds for one client"),
            in: members, at: path, default: defaults.clientOutboxBytes, minimum: 1
        )
        let watcherOutbox = optionalCount(
            Field("watcherOutbox", "100000", "the publications the coordinator holds for one watcher before it drops"),
            in: members, at: path, default: defaults.watcherOutbox, minimum: 1
        )
        let watcherOutboxBytes = optionalCount(
            Field("watcherOutboxBytes", "67108864", "the bytes of publications the coordinator holds for one watcher before it drops"),
            in: members, at: path, default: defaults.watcherOutboxBytes, minimum: 1
        )
        guard let mailbox, let workerOutbox, let workerOutboxBytes, let clientOutbox, let clientOutboxBytes, let watcherOutbox,
              let watcherOutboxBytes else { return nil }
        return Topology.Queues(mailboxCapacity: mailbox, workerOutbox: workerOutbox, workerOutboxBytes: workerOutboxBytes,
                               clientOutbox: clientOutbox, clientOutboxBytes: clientOutboxBytes, watcherOutbox: watcherOutbox,
                               watcherOutboxBytes: watcherOutboxBytes)
    }

    private mutating func decodeIOLimits(in root: [String: JSONValue]) -> Topology.IOLimits? {
        let defaults = Topology.IOLimits()
        guard let value = root["ioLimits"] else { return defaults }
        let path = JSONPath.root.appending("ioLimits")
        guard let members = members(
            of: value, at: path, known: TopologyKeys.ioLimits,
            what: "an object like { \"timeoutMs\": 30000, \"concurrentPerWorker\": 256 }"
        ) else { return nil }
        let timeout = optionalCount(
            Field("timeoutMs", "30000", "the milliseconds an io call may run when its io[] entry sets no timeoutMs"),
            in: members, at: path, default: defaults.timeoutMs, minimum: 1
        )
        let concurrent = optionalCount(
            Field("concurrentPerWorker", "256", "the io calls one worker may run at once for other workers' machines"),
            in: members, at: path, default: defaults.concurrentPerWorker, minimum: 1
        )
        guard let timeout, let concurrent else { return nil }
        return Topology.IOLimits(timeoutMs: timeout, concurrentPerWorker: concurrent)
    }

    // MARK: - Names and references

    /// Adds `name` to `names`, reporting it when it is declared already.
    mutating func declare(_ name: String, at path: JSONPath, in names: inout KnownNames, kind: String) {
        if let first = names.paths[name] {
            report(.duplicateName, path, "duplicate \(kind) '\(name)' (first at \(first)); give each \(kind) its own name")
        } else {
            names.order.append(name)
            names.paths[name] = path
        }
    }

    /// Reports `name` when it is not in `names`; `true` when it is.
    @discardableResult
    mutating func resolve(_ name: String, at path: JSONPath, in names: KnownNames, kind: String, section: String) -> Bool {
        guard !names.contains(name) else { return true }
        guard names.complete else { return false }
        let known = names.order.map { "'\($0)'" }.joined(separator: ", ")
        let message = if names.order.isEmpty {
            "unknown \(kind) '\(name)'; declare it in \(section)"
        } else if let guess = Self.closest(to: name, among: names.order) {
            "unknown \(kind) '\(name)'; did you mean '\(guess)'? (known: \(known))"
        } else {
            "unknown \(kind) '\(name)'; use one of \(known), or declare it in \(section)"
        }
        report(.unknownReference, path, message)
        return false
    }

    /// Reports names that are empty (already reported by the text read) or contain `/`, which
    /// separates a machine name from a key in addresses.
    mutating func checkName(_ name: String, at path: JSONPath, kind: String) {
        checkNFC(name, at: path, kind: "\(kind) name")
        if name.contains("/") {
            let suggestion = String(name.map { $0 == "/" ? "-" : $0 })
            report(.invalidValue, path, "\(kind) names cannot contain '/', which separates a machine name from a key; use e.g. '\(suggestion)'")
        }
    }
}
