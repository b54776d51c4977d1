import Foundation

/// A topology for one test, written as JSON into the test's own directory. Endpoints are filled
/// in per transport so that no two launches ever share one: `tcp://127.0.0.1:*` (the coordinator
/// binds ports the system picks, and reports them), ipc sockets inside the test's temp dir, or
/// none at all, as users write them, with a runtime directory of the test's own.
///
/// Every topology also gets `probe`, a Counter on the first worker group: the harness pokes it
/// to learn when a watcher's subscription is live.
struct TopologyFile {
    enum Transport: String {
        case tcp, ipc
        /// No endpoints written, as in the default topology: sockets in the runtime directory
        /// (`GROVE_RUNTIME_DIR`, set to `<directory>/run` for every process the harness starts
        /// for the cluster; ``environment(in:)``).
        case runtimeDirectory
    }

    /// The runtime directory of a cluster launched in `directory` (a path short enough for
    /// sockets: the directory is one of ``Cluster/makeDirectory()``'s).
    static func runtimeDirectory(in directory: URL) -> String { directory.path + "/run" }

    /// What fsm-launch and the harness's own commands are run with, over the test's environment.
    func environment(in directory: URL) -> [String: String] {
        let runtime = transport == .runtimeDirectory ? ["GROVE_RUNTIME_DIR": Self.runtimeDirectory(in: directory)] : [:]
        return runtime.merging(environment) { $1 }
    }

    struct WorkerGroup {
        var name: String
        var count = 1
        var arguments: [String] = []
        var external = false
        /// The group's `supervision` object as JSON text, when a test sets one.
        var supervision: String?
        /// The public key file of an external group (CURVE topologies).
        var key: String?
        /// `workers[].executable`, when not fsm-worker: a path, or a name next to fsm-launch.
        var executable: String?
        /// `workers[].direct`: its workers serve direct routes (docs/DIRECT-ROUTES.md).
        var direct = false
    }

    struct Machine {
        var name: String
        var type: String
        var worker: String
        var keyed = false
        /// `machines[].durability`, when not the default (`none`).
        var durability: String?
        /// `machines[].audit`.
        var audit = false
        /// `machines[].onEnd`, when not the default (`stay`).
        var onEnd: String?
        /// `machines[].restart` as JSON text, when a test sets one.
        var restart: String?
        /// `machines[].passivateAfterMs`, when a test sets one.
        var passivateAfterMs: Int?
    }

    struct Route {
        var from: String
        var when: String
        var to: String
        var event: String
    }

    var name: String
    var transport: Transport
    var workers: [WorkerGroup]
    var machines: [Machine]
    /// Request name → worker group.
    var io: [(request: String, worker: String)] = []
    /// `io[].timeoutMs` by request name, for the requests of `io` that set one.
    var ioTimeouts: [String: Int] = [:]
    /// `io[].machines` by request name: the machines that may start it (needed for machines on
    /// an external group).
    var ioMachines: [String: [String]] = [:]
    /// The `ioLimits` section as JSON text, when a test sets one.
    var ioLimits: String?
    var routes: [Route] = []
    var heartbeat = (intervalMs: 250, timeoutMs: 1500)
    /// `queues.workerOutbox`, when a test needs a small one.
    var workerOutbox: Int?
    /// `queues.clientOutbox`, when a test needs a small one.
    var clientOutbox: Int?
    /// `queues.clientOutboxBytes`, when a test needs a small one.
    var clientOutboxBytes: Int?
    /// `queues.watcherOutbox`, when a test needs a small one (a watcher that falls behind).
    var watcherOutbox: Int?
    /// `queues.watcherOutboxBytes`, when a test needs a small one.
    var watcherOutboxBytes: Int?
    /// The `security` section as JSON text; by default none over ipc and `"insecure": true` over tcp.
    var security: String?
    /// The `audit` section as JSON text, when a test sets one.
    var audit: String?
    /// The `durability` section as JSON text, when a test sets one.
    var durabilitySettings: String?
    /// The `limits` section as JSON text, when a test sets one.
    var limits: String?
    /// The `poison` section as JSON text, when a test sets one.
    var poison: String?
    /// The `metrics` section as JSON text, when a test sets one.
    var metrics: String?
    /// The `view` section as JSON text, when a test sets one.
    var view: String?
    /// Key pairs `fsm-keys new` makes in `<directory>/keys` before the launch.
    var keyPairs: [String] = []
    /// The key pair the harness's own fsm-send calls use (with the coordinator's public key).
    var clientKey: String?
    /// The address tcp endpoints bind: loopback, or a host's of ``NetworkHosts``.
    var tcpHost = "127.0.0.1"
    /// Variables fsm-launch (and so its workers) and the harness's fsm-send calls get besides
    /// the test's own (the OpenTelemetry exporter's, say).
    var environment: [String: String] = [:]

    static let probe = "probe"

    /// The document, with endpoints for `directory`.
    func json(in directory: URL) throws -> [String: Any] {
        let endpoints: [String: String]?
        switch transport {
        case .tcp:
            // Port `*`: the coordinator binds a port the system picks, so no two launches ever
            // race for one. The harness reads them back: the clients endpoint from fsm-launch's
            // `ready` line, the events endpoint from the listing.
            endpoints = ["clients": "tcp://\(tcpHost):*", "workers": "tcp://\(tcpHost):*", "events": "tcp://\(tcpHost):*"]
        case .ipc:
            endpoints = ["clients": "ipc://\(directory.path)/clients.ipc", "workers": "ipc://\(directory.path)/workers.ipc",
                         "events": "ipc://\(directory.path)/events.ipc"]
        case .runtimeDirectory:
            endpoints = nil
        }
        var machineList: [[String: Any]] = machines.map { machine in
            var entry: [String: Any] = ["name": machine.name, "type": machine.type, "worker": machine.worker, "keyed": machine.keyed]
            if let durability = machine.durability { entry["durability"] = durability }
            if machine.audit { entry["audit"] = true }
            if let onEnd = machine.onEnd { entry["onEnd"] = onEnd }
            if let after = machine.passivateAfterMs { entry["passivateAfterMs"] = after }
            if let restart = machine.restart { entry["restart"] = try? JSONSerialization.jsonObject(with: Data(restart.utf8)) }
            return entry
        }
        if let first = workers.first(where: { !$0.external }) {
            machineList.append(["name": Self.probe, "type": "Counter", "worker": first.name])
        }
        var queues: [String: Any] = [:]
        if let workerOutbox { queues["workerOutbox"] = workerOutbox }
        if let clientOutbox { queues["clientOutbox"] = clientOutbox }
        if let clientOutboxBytes { queues["clientOutboxBytes"] = clientOutboxBytes }
        if let watcherOutbox { queues["watcherOutbox"] = watcherOutbox }
        if let watcherOutboxBytes { queues["watcherOutboxBytes"] = watcherOutboxBytes }
        var document: [String: Any] = [
            "queues": queues,
            "name": name,
            "workers": workers.map { group -> [String: Any] in
                var entry: [String: Any] = ["name": group.name, "count": group.count]
                if !group.arguments.isEmpty { entry["arguments"] = group.arguments }
                if group.external { entry["external"] = true }
                if group.direct { entry["direct"] = true }
                if let key = group.key { entry["key"] = key }
                if let executable = group.executable { entry["executable"] = executable }
                if let supervision = group.supervision {
                    entry["supervision"] = try? JSONSerialization.jsonObject(with: Data(supervision.utf8))
                }
                return entry
            },
            "machines": machineList,
            "io": io.map { placement -> [String: Any] in
                var entry: [String: Any] = ["request": placement.request, "worker": placement.worker]
                if let timeout = ioTimeouts[placement.request] { entry["timeoutMs"] = timeout }
                if let machines = ioMachines[placement.request] { entry["machines"] = machines }
                return entry
            },
            "routes": routes.map { ["from": $0.from, "when": $0.when, "to": $0.to, "event": $0.event] },
            "heartbeat": ["intervalMs": heartbeat.intervalMs, "timeoutMs": heartbeat.timeoutMs],
            "security": security.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) }
                ?? (transport == .tcp ? ["insecure": true] : [:]),
        ]
        if let endpoints { document["coordinator"] = endpoints }
        if let ioLimits { document["ioLimits"] = try JSONSerialization.jsonObject(with: Data(ioLimits.utf8)) }
        if let audit { document["audit"] = try JSONSerialization.jsonObject(with: Data(audit.utf8)) }
        if let durabilitySettings { document["durability"] = try JSONSerialization.jsonObject(with: Data(durabilitySettings.utf8)) }
        if let limits { document["limits"] = try JSONSerialization.jsonObject(with: Data(limits.utf8)) }
        if let poison { document["poison"] = try JSONSerialization.jsonObject(with: Data(poison.utf8)) }
        if let metrics { document["metrics"] = try JSONSerialization.jsonObject(with: Data(metrics.utf8)) }
        if let view { document["view"] = try JSONSerialization.jsonObject(with: Data(view.utf8)) }
        return document
    }

    /// Writes the document to `<directory>/topology.json`.
    func write(in directory: URL) throws -> URL {
        let url = directory.appendingPathComponent("topology.json")
        let data = try JSONSerialization.data(withJSONObject: try json(in: directory), options: [.prettyPrinted, .sortedKeys])
        try data.write(to: url)
        return url
    }
}

/// A TCP port on 127.0.0.1 that nobody listens on, and nobody can while it is held: bound
/// (the system picks it) but never listening, so a connection to it is refused. For tests of
/// what a client does with no coordinator at a tcp endpoint.
final class UnlistenedPort {
    let port: Int
    private let descriptor: Int32

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw HarnessError("socket() failed: \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = bound == 0 ? withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        } : -1
        guard named == 0 else {
            close(fd)
            throw HarnessError("binding a tcp port on 127.0.0.1 failed: \(errno)")
        }
        descriptor = fd
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    deinit { close(descriptor) }
}
