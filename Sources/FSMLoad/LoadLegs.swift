import GroveClient
import GroveCluster
import GroveWire

/// A road fsm-load drives events by (`--route`).
enum LoadRoute: String, Sendable {
    /// Every event through the coordinator's clients endpoint.
    case coordinator
    /// Each event straight to the worker that runs its address (docs/DIRECT-ROUTES.md).
    case direct
}

/// Where one connection sends its events: one leg (a socket) per road, all driven by the
/// connection's one thread, as a client with one I/O thread would. On the coordinator road a
/// single leg; on the direct road one per worker endpoint that serves some of the connection's
/// addresses directly, plus one through the coordinator for the addresses no worker serves so.
/// The connection's window, rate and count are shared by its legs.
struct LoadLegs {
    /// At most this many legs per connection (one socket each, polled together).
    static let maximumLegs = 64

    struct Leg {
        let endpoint: String
        let credentials: Credentials?
        /// A leg straight to a worker (not the coordinator's).
        let toWorker: Bool
    }

    /// The coordinator's clients endpoint and the credentials for it.
    struct Detour: Sendable {
        let endpoint: String
        let credentials: Credentials?
    }

    /// On the direct road: where and as whom to ask where the machine lives now, when a leg is
    /// told (or finds) that its worker no longer serves it.
    struct Relocation: Sendable {
        let coordinator: String
        let credentials: Credentials?
        let machine: String
    }

    let legs: [Leg]
    /// The leg of each of the plan's addresses, by the address's index.
    let legOf: [Int]
    /// With `--retry` on the direct road: the coordinator that events a leg's worker refused
    /// (`moved`, `worker-lost`) or left unanswered go to again.
    let detour: Detour?
    /// On the direct road (nil on the coordinator's).
    var relocation: Relocation? = nil

    /// Every address through the coordinator.
    static func coordinator(_ endpoint: String, credentials: Credentials?, addresses: Int) -> LoadLegs {
        LoadLegs(legs: [Leg(endpoint: endpoint, credentials: credentials, toWorker: false)], legOf: Array(repeating: 0, count: addresses),
                 detour: nil)
    }

    /// Splits `plan`'s addresses by their road under `location`, as ``RouteCore`` decides it.
    static func direct(_ plan: LoadPlan, location: Location, coordinator: String, credentials: Credentials?) throws -> LoadLegs {
        var core = RouteCore()
        core.located(location)
        var targets: [String: RouteCore.Target] = [:]
        var endpoints: [String] = []
        for address in plan.addresses {
            switch core.route(address) {
            case .direct(let target):
                targets[target.endpoint] = target
                endpoints.append(target.endpoint)
            case .coordinator, .locate:
                endpoints.append(coordinator)
            }
        }
        let roads = Set(endpoints).sorted()
        guard roads.count <= maximumLegs else {
            throw LoadError("the addresses live on \(roads.count) workers; fsm-load drives at most \(maximumLegs) per connection")
        }
        let legs = try roads.map { endpoint in
            guard let target = targets[endpoint] else { return Leg(endpoint: endpoint, credentials: credentials, toWorker: false) }
            guard let credentials else { return Leg(endpoint: endpoint, credentials: nil, toWorker: true) }
            guard let serverKey = target.serverKey, let speaking = credentials.speaking(to: serverKey) else {
                throw LoadError("worker \(target.worker) serves \(endpoint) without a CURVE key this client can use, "
                    + "while the coordinator speaks CURVE; check the worker's registration (fsm-send locate \(location.machine))")
            }
            return Leg(endpoint: endpoint, credentials: speaking, toWorker: true)
        }
        let index = Dictionary(uniqueKeysWithValues: roads.enumerated().map { ($1, $0) })
        let detour = plan.retry && plan.mode != .raw && legs.contains(where: \.toWorker) ? Detour(endpoint: coordinator, credentials: credentials) : nil
        return LoadLegs(legs: legs, legOf: endpoints.map { index[$0]! }, detour: detour,
                        relocation: Relocation(coordinator: coordinator, credentials: credentials, machine: location.machine))
    }
}

extension FSMLoad {
    /// Where `addresses` live, for the direct road; refused unless some worker serves them directly.
    func locateForDirect(client: Client, addresses: [String]) throws -> Location {
        let location: Location
        do {
            location = try client.locate(machine)
        } catch {
            throw LoadError(error.code == .unknownKind ? "the coordinator does not answer locate (it predates direct routes); drop --route direct"
                                                       : "cannot locate '\(machine)' for --route direct: \(error.message)")
        }
        var core = RouteCore()
        core.located(location)
        guard addresses.contains(where: { if case .direct = core.route($0) { return true } else { return false } }) else {
            let states = location.workers.map { "\($0.name) \($0.state.rawValue)" }.joined(separator: ", ")
            throw LoadError("no worker serves '\(machine)' directly (\(states)); set \"direct\": true on its group in the topology's workers")
        }
        return location
    }

    /// Sends one no-wait event to each address through the coordinator, which starts the keyed
    /// instances a direct event may not (docs/DIRECT-ROUTES.md 2.6); unreported.
    func spawnForDirect(_ plan: LoadPlan, endpoint: String) throws {
        var spawn = plan
        spawn.mode = .ack
        spawn.retry = false
        spawn.ratePerConnection = nil
        spawn.linger = .zero
        spawn.count = (plan.addresses.count + connections - 1) / connections
        spawn.window = min(plan.window, max(plan.batch, spawn.count!))
        let run = try measure(spawn, endpoint: endpoint, pids: [:], label: "starting instances for the direct road")
        guard run.lost == 0, run.failed == 0 else {
            let codes = run.errors.map { "\($0.key)=\($0.value)" }.sorted().joined(separator: " ")
            throw LoadError("starting the instances for the direct road through the coordinator lost \(run.lost) and had \(run.failed) refused (\(codes))")
        }
    }
}
