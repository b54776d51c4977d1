import GroveCluster
import GroveWire

/// Where each machine's requests go, worked out from the topology once: whether it is keyed,
/// and the numbers of the workers of its group. A request for an address the coordinator has
/// not placed lately (``CoordinatorCore/resolved``), as every event to a fresh key is, is then
/// placed with one lookup by name and a hash of its key. Asking the topology instead copied the
/// machine's spec and made its group's worker names for each such request: with a million
/// fresh keys that was a third of the coordinator's time.
struct MachineRoutes {
    struct Route {
        let keyed: Bool
        /// The numbers of its group's workers, in the topology's order: a single machine runs
        /// on the first, a keyed instance on the one its key's stable hash picks.
        let pool: [Int]
    }

    private let byName: [String: Route]

    init(topology: Topology, workerNumbers: [String: Int]) {
        var byName: [String: Route] = [:]
        for spec in topology.machines where byName[spec.name] == nil {
            let pool = topology.instances(of: spec.worker).compactMap { workerNumbers[$0] }
            byName[spec.name] = Route(keyed: spec.keyed, pool: pool)
        }
        self.byName = byName
    }

    subscript(machine: String) -> Route? { byName[machine] }
}

extension CoordinatorCore {
    /// The worker instance hosting `address`.
    /// - Throws: ``WireError`` `unknown-machine` or `unavailable`, with what to do next.
    func resolve(_ address: String) throws(WireError) -> String {
        workerNames[try resolveNumber(address)]
    }

    /// ``resolve(_:)`` as the worker's number (``workerNames``).
    func resolveNumber(_ address: String) throws(WireError) -> Int {
        let slash = address.utf8.firstIndex(of: UInt8(ascii: "/"))
        let name = slash.map { String(address[..<$0]) } ?? address
        guard let route = routes[name] else {
            let known = topology.machines.map(\.name).joined(separator: ", ")
            throw WireError(.unknownMachine, "no machine named '\(name)' in topology '\(topology.name)'; known machines: \(known)",
                            address: address)
        }
        if route.keyed, slash == nil || address.utf8.index(after: slash!) == address.utf8.endIndex {
            throw WireError(.unknownMachine, "machine '\(name)' is keyed; address an instance as \(name)/<key>", address: address)
        }
        if !route.keyed, slash != nil {
            throw WireError(.unknownMachine, "machine '\(name)' is not keyed; address it as \(name)", address: address)
        }
        guard !route.pool.isEmpty else {
            throw WireError(.unknownMachine, "machine '\(name)' has no worker", address: address)
        }
        let worker: Int
        if let slash, route.pool.count > 1 {
            if handoff.isIdle {
                worker = route.pool[Topology.poolIndex(ofKeyIn: address, after: slash, poolSize: route.pool.count)]
            } else {
                // While a worker is handed off, or its instances handed back: where that puts it.
                let key = String(address[address.utf8.index(after: slash)...])
                guard let spec = topology.machine(named: name), let host = host(of: spec, key: key) else {
                    throw WireError(.unknownMachine, "machine '\(name)' has no worker", address: address)
                }
                worker = number(of: host)
            }
        } else {
            worker = route.pool[0]
        }
        guard registeredNumbers[worker] else {
            throw WireError(.unavailable,
                "machine '\(address)' lives on worker \(workerNames[worker]), which is not registered (starting, restarting or lost); "
                    + "retry shortly", address: address)
        }
        return worker
    }
}
