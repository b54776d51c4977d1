import Foundation
import GroveCluster
import GroveCoordinator
import GroveWorker
import Logging
import ServiceLifecycle
import Synchronization

/// The topology as a service of fsm-launch's `ServiceGroup`: spawns the workers, waits for
/// every one to register, prints `ready <endpoint>`, and on the group's graceful shutdown (SIGINT,
/// SIGTERM, the parent gone, a group that escalated) stops the coordinator and then the workers.
final class TopologyService: Service, Sendable {
    /// Workers that did not register within `--ready-timeout`.
    struct NotReady: Error, CustomStringConvertible {
        var description: String
    }

    let topology: Topology
    let coordinator: Coordinator
    let supervisor: Supervisor
    /// Seconds to wait for every worker to register (`--ready-timeout`).
    let readyTimeout: Double
    /// The live view, when the topology has one: its URL is printed before `ready`.
    let view: LiveView?
    /// The topology file's folder, where the key and password files of external workers are.
    let topologyDirectory: URL?
    let log: Logger
    private let ready = Atomic<Bool>(false)

    /// Whether every worker registered and the ready line was printed.
    var isReady: Bool { ready.load(ordering: .acquiring) }

    init(topology: Topology, coordinator: Coordinator, supervisor: Supervisor, readyTimeout: Double, view: LiveView? = nil,
         topologyDirectory: URL? = nil, log: Logger) {
        self.topology = topology
        self.coordinator = coordinator
        self.supervisor = supervisor
        self.readyTimeout = readyTimeout
        self.view = view
        self.topologyDirectory = topologyDirectory
        self.log = log
    }

    /// - Throws: ``Supervisor/LaunchError`` when a worker executable is missing, ``NotReady``.
    func run() async throws {
        // The coordinator first: workers going away during a shutdown are not losses to report.
        defer {
            coordinator.stop()
            supervisor.shutdown()
        }
        // A signal as the group started: start nothing.
        guard !Task.isShuttingDownGracefully else { return }
        try supervisor.spawnAll()
        let endpoints = coordinator.endpoints
        log.notice("coordinator of '\(topology.name)' bound: clients \(endpoints.clients), workers \(endpoints.workers), events \(endpoints.events)")
        let commands = topology.externalWorkerCommands(workersEndpoint: endpoints.workers, hostName: Self.hostName(),
                                                       coordinatorKey: coordinator.publicKey?.z85, topologyDirectory: topologyDirectory)
        for command in commands { printError(command.instructions) }
        // Polled: registration is the coordinator's, on its own thread, and tells nobody.
        let deadline = ContinuousClock.now + .seconds(readyTimeout)
        while !coordinator.allWorkersRegistered {
            guard !Task.isShuttingDownGracefully, !Task.isCancelled else { return }
            guard ContinuousClock.now < deadline else {
                throw NotReady(description: "workers \(coordinator.workersNotRegistered.joined(separator: ", ")) did not register within "
                    + "\(readyTimeout) s; see their output above, or start external workers with --coordinator \(coordinator.workersConnectEndpoint)")
            }
            try? await Task.sleep(for: .milliseconds(20))
        }
        supervisor.becameReady()
        ready.store(true, ordering: .releasing)
        // The metrics URL as bound (a port 0 resolved), on a line of its own before `ready`.
        if let url = coordinator.metricsURL { print("metrics \(url)") }
        // The view's URL with the launching user's token (as Jupyter prints its own): whoever
        // reads fsm-launch's output is the launching user. A view that could not bind ends
        // fsm-launch with its error instead.
        if let view, let url = await view.url(within: .seconds(readyTimeout)) { print("view \(url)") }
        print("ready \(coordinator.clientsConnectEndpoint)")
        fflush(nil)
        try? await gracefulShutdown()
    }

    /// This host's name as the kernel has it (`gethostname`): Foundation's `hostName` may ask
    /// DNS, which can hang for seconds on a host that has none.
    static func hostName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "localhost" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
