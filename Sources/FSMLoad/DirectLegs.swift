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

/// One connection's share of addresses on the direct road, split by the worker each address
/// lives on: one leg (a socket on its own thread) per worker endpoint, plus one through the
/// coordinator for the addresses no worker serves directly. Each leg keeps a part of the
/// connection's window, rate and count in proportion to its addresses, so a run keeps as many
/// events in flight on either road.
enum DirectLegs {
    /// At most this many legs per connection (correlations start at `leg index << 48`).
    static let maximumLegs = 64

    struct Leg {
        let endpoint: String
        let plan: LoadPlan
        let credentials: Credentials?
        /// A leg to a worker, with `--retry`: the coordinator it resends through.
        var detour: Detour? = nil
    }

    /// The coordinator's clients endpoint and the credentials for it.
    struct Detour: Sendable {
        let endpoint: String
        let credentials: Credentials?
    }

    /// Splits `plan`'s addresses by their road under `location`, as ``RouteCore`` decides it.
    static func split(_ plan: LoadPlan, location: Location, coordinator: String, credentials: Credentials?) throws -> [Leg] {
        var core = RouteCore()
        core.located(location)
        var targets: [String: RouteCore.Target] = [:]
        var addresses: [String: [String]] = [:]
        for address in plan.addresses {
            switch core.route(address) {
            case .direct(let target):
                targets[target.endpoint] = target
                addresses[target.endpoint, default: []].append(address)
            case .coordinator, .locate:
                addresses[coordinator, default: []].append(address)
            }
        }
        guard addresses.count <= maximumLegs else {
            throw LoadError("the addresses live on \(addresses.count) workers; fsm-load drives at most \(maximumLegs) per connection")
        }
        let total = max(1, plan.addresses.count)
        return try addresses.keys.sorted().map { endpoint in
            let share = addresses[endpoint]!
            var part = plan
            part.addresses = share
            part.window = max(plan.batch, plan.window * share.count / total)
            part.ratePerConnection = plan.ratePerConnection.map { $0 * Double(share.count) / Double(total) }
            part.count = plan.count.map { max(1, $0 * share.count / total) }
            guard let target = targets[endpoint] else { return Leg(endpoint: endpoint, plan: part, credentials: credentials) }
            let detour = plan.retry && plan.mode != .raw ? Detour(endpoint: coordinator, credentials: credentials) : nil
            guard let credentials else { return Leg(endpoint: endpoint, plan: part, credentials: nil, detour: detour) }
            guard let serverKey = target.serverKey, let speaking = credentials.speaking(to: serverKey) else {
                throw LoadError("worker \(target.worker) serves \(endpoint) without a CURVE key this client can use, "
                    + "while the coordinator speaks CURVE; check the worker's registration (fsm-send locate \(location.machine))")
            }
            return Leg(endpoint: endpoint, plan: part, credentials: speaking, detour: detour)
        }
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
