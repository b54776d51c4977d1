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

    init(topology: Topology, host: String, port: Int, events: String, clients: String, credentials: Credentials?,
         executableDirectory: URL, log: Logger) {
        hub = LiveViewHub(topology: topology)
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
        let watching = Thread { [hub, events, credentials, log] in Self.watch(events, credentials: credentials, into: hub, until: stop, log: log) }
        watching.start()
        let describing = Task.detached { [hub, executableDirectory, log] in
            hub.setGraphs(await Self.describe(hub.topology, executableDirectory: executableDirectory, log: log))
        }
        let ticking = Task { [hub] in
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(1))
                hub.tick()
            }
        }
        defer {
            stop.set()
            ticking.cancel()
            describing.cancel()
            hub.closeAll()
        }
        try await app.runService()
    }

    /// Reads the events endpoint until `stop`, every topic: what `fsm-send watch` prints.
    private static func watch(_ endpoint: String, credentials: Credentials?, into hub: LiveViewHub, until stop: StopFlag, log: Logger) {
        let watcher: Watcher
        do {
            watcher = try Watcher(endpoint: endpoint, credentials: credentials)
        } catch {
            log.error("the live view cannot watch \(endpoint), so it shows no changes: \(error)")
            return
        }
        while !stop.isSet {
            guard case .publication(let topic, let message, _)? = watcher.next() else { continue }
            let payload = (try? JSONValue(parsing: Data(message.payload))) ?? .string(String(decoding: message.payload, as: UTF8.self))
            hub.publish(ViewCore.Publication(topic: topic, kind: message.header.kind.name, address: message.address, payload: payload))
        }
    }
}

/// Set once, read from another thread.
final class StopFlag: Sendable {
    private let flag = Atomic<Bool>(false)
    var isSet: Bool { flag.load(ordering: .acquiring) }
    func set() { flag.store(true, ordering: .releasing) }
}
