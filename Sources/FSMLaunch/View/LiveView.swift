import Foundation
import GroveClient
import GroveCluster
import GroveView
import GroveWire
import Hummingbird
import HummingbirdCore
import Logging
import ServiceLifecycle
import Synchronization

/// fsm-launch's live view (topology `view.listen`), as a service of its `ServiceGroup`: the
/// HTTP server, a watcher of the coordinator's events endpoint feeding ``LiveViewHub``, the
/// rates' tick, and the state graphs the workers describe. docs/ARCHITECTURE.md, "Live view".
final class LiveView: Service, Sendable {
    let hub: LiveViewHub
    let host: String
    let requestedPort: Int
    let events: String
    let clients: String
    let credentials: Credentials?
    let executableDirectory: URL
    let log: Logger
    /// The port once bound (`requestedPort` may be 0).
    private let boundPort = Atomic<Int>(0)
    /// The launching user's token: every role, for as long as this view runs.
    let launchToken: String
    /// The coordinator's metrics text, for the plots (``Coordinator/metricsText(_:)``); nil
    /// without `metrics.listen`.
    let metricsSource: MetricsSource?
    typealias MetricsSource = @Sendable (_ done: @escaping @Sendable ([UInt8]?) -> Void) -> Void

    init(topology: Topology, host: String, port: Int, events: String, clients: String, credentials: Credentials?,
         executableDirectory: URL, log: Logger, metricsSource: MetricsSource? = nil) {
        hub = LiveViewHub(topology: topology)
        self.metricsSource = metricsSource
        self.host = host
        requestedPort = port
        self.events = events
        self.clients = clients
        self.credentials = credentials
        self.executableDirectory = executableDirectory
        self.log = log
        let everything = Topology.ClientGrant(key: "", roles: Set(Topology.Role.allCases))
        launchToken = hub.mint(for: ViewAccess.Viewer(grants: [everything], name: "the launching user"), lifetime: nil)!
    }

    /// The URL to open, token included, once the server listens; `nil` if it did not within
    /// `timeout` (its error ends fsm-launch).
    func url(within timeout: Duration) async -> String? {
        let deadline = ContinuousClock.now + timeout
        while boundPort.load(ordering: .acquiring) == 0 {
            guard ContinuousClock.now < deadline, !Task.isCancelled else { return nil }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return "http://\(host):\(boundPort.load(ordering: .acquiring))/?token=\(launchToken)"
    }

    func run() async throws {
        let port = { @Sendable [self] in boundPort.load(ordering: .acquiring) }
        let router = LiveViewServer.router(hub: hub, clients: clients, credentials: credentials, port: port)
        // Any local user can open connections to loopback: at most `connectionLimit` are taken
        // (more wait in the kernel's backlog, costing this process nothing), and one that does
        // not send a whole request head within `idleTimeout`, or idles after its answer, is
        // closed (a stream of server-sent events, being written, is not idle).
        let app = Application(router: router,
                              server: .http1(configuration: .init(idleTimeout: .seconds(Int64(LiveViewServer.idleTimeout.components.seconds)))),
                              configuration: .init(address: .hostname(host, port: requestedPort), serverName: "grove-view",
                                                   availableConnectionsDelegate: MaximumAvailableConnections(LiveViewServer.connectionLimit)),
                              onServerRunning: { [self] channel in boundPort.store(channel.localAddress?.port ?? 0, ordering: .releasing) },
                              logger: log)
        let stop = StopFlag()
        let watching = Thread { [hub, events, clients, credentials, log] in
            Self.watch(events, clients: clients, credentials: credentials, into: hub, until: stop, log: log)
        }
        watching.start()
        // On a thread of its own, as the watcher: describing waits on child processes, and a
        // task doing so could wait behind (or hold) one of the few threads Swift's pool has.
        let describing = Thread { [hub, executableDirectory, log] in
            hub.setGraphs(Self.describe(hub.topology, executableDirectory: executableDirectory, until: stop, log: log))
        }
        describing.start()
        let ticking = Task { [hub, metricsSource] in
            var seconds: Int64 = 0
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(1))
                hub.tick()
                seconds += 1
                if let metricsSource, (seconds * 1000) % ViewMetrics.interval == 0 {
                    metricsSource { text in
                        guard let text else { return }
                        // Off the coordinator's thread: the text is read on the view's own.
                        Task.detached { hub.metrics(MetricsText(String(decoding: text, as: UTF8.self))) }
                    }
                }
            }
        }
        defer {
            stop.set()
            ticking.cancel()
            hub.closeAll()
        }
        try await app.runService()
    }

    /// Reads the events endpoint until `stop`, every topic: what `fsm-send watch` prints. When
    /// publications were dropped (the view fell behind the coordinator's `queues.watcherOutbox`)
    /// or the coordinator restarted, the states are taken again from a snapshot on the clients
    /// endpoint, as ``Watcher`` shows, so the page does not keep a state the machine has left.
    private static func watch(_ endpoint: String, clients: String, credentials: Credentials?, into hub: LiveViewHub, until stop: StopFlag,
                              log: Logger) {
        let watcher: Watcher
        do {
            watcher = try Watcher(endpoint: endpoint, credentials: credentials)
        } catch {
            log.error("the live view cannot watch \(endpoint), so it shows no changes: \(error)")
            return
        }
        // Machines that do not change while the view watches publish nothing: ask each single
        // machine where it stands (after subscribing, so a change from then on is published).
        let asking = Thread { [hub] in initialStates(of: hub, clients: clients, credentials: credentials, log: log) }
        asking.start()
        // A burst of drops shows as a gap on each topic: one snapshot a second at most covers them.
        var stale = false
        var lastResync = ContinuousClock.now - resyncInterval
        while !stop.isSet {
            switch watcher.next() {
            case nil:
                break
            case .gap, .restarted:
                stale = true
            case .publication(let topic, let message, _):
                publish(topic: topic, message: message, into: hub)
            }
            if stale, ContinuousClock.now - lastResync >= resyncInterval {
                stale = false
                lastResync = .now
                resync(watcher, clients: clients, credentials: credentials, into: hub, log: log)
            }
        }
    }

    /// The least time between two snapshots taken after missed publications.
    static let resyncInterval: Duration = .seconds(1)

    private static func publish(topic: String, message: WireMessage, into hub: LiveViewHub) {
        let payload = (try? JSONValue(parsing: Data(message.payload))) ?? .string(String(decoding: message.payload, as: UTF8.self))
        hub.publish(ViewCore.Publication(topic: topic, kind: message.header.kind.name, address: message.address, payload: payload))
    }

    /// Each single machine's state as its worker answers `get`, for the machines the view has
    /// heard nothing of yet (a publication that came first is newer). Keyed instances are
    /// shown from their first publication.
    private static func initialStates(of hub: LiveViewHub, clients: String, credentials: Credentials?, log: Logger) {
        let client: Client
        do {
            // At launch the workers may not have registered yet: `unavailable` is asked again.
            client = try Client(endpoint: clients, timeout: .seconds(5), retryUnavailable: true, credentials: credentials)
        } catch {
            log.warning("the live view cannot ask the machines' states, so each shows from its first change: \(error)")
            return
        }
        for machine in hub.topology.machines where !machine.keyed {
            guard let bytes = try? client.state(of: machine.name) else { continue }
            let state = (try? JSONValue(parsing: Data(bytes))) ?? .string(String(decoding: bytes, as: UTF8.self))
            hub.publishUnlessKnown(ViewCore.Publication(topic: "state:\(machine.name)", kind: ViewCore.resyncKind, address: machine.name,
                                                        payload: .object(["address": .string(machine.name), "state": state])))
        }
    }

    private static func resync(_ watcher: Watcher, clients: String, credentials: Credentials?, into hub: LiveViewHub, log: Logger) {
        let snapshot: StateSnapshot
        do {
            let client = try Client(endpoint: clients, timeout: .seconds(5), credentials: credentials)
            snapshot = try client.snapshot(prefixes: ["state:"])
        } catch {
            log.warning("the live view missed publications and could not take a snapshot of the states, so some may be stale until they change: \(error)")
            return
        }
        for entry in watcher.apply(snapshot) {
            let address = entry.payload.objectValue?["address"]?.stringValue ?? String(entry.topic.dropFirst("state:".count))
            hub.publish(ViewCore.Publication(topic: entry.topic, kind: ViewCore.resyncKind, address: address, payload: entry.payload))
        }
    }
}

/// Set once, read from another thread.
final class StopFlag: Sendable {
    private let flag = Atomic<Bool>(false)
    var isSet: Bool { flag.load(ordering: .acquiring) }
    func set() { flag.store(true, ordering: .releasing) }
}
