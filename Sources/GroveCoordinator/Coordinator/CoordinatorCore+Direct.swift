import GroveCluster
@_spi(GroveInternal) import GroveWire

// What a worker serving direct routes is told (docs/DIRECT-ROUTES.md, 1.5): the welcome's
// `direct` part, then `access` (the client keys, their grants, the suspended ones) and, for a
// pool with a machine that hands off, `placement` (which workers are handed off or taking theirs
// back), each pushed again whenever it changes. The worker judges a direct request with these
// as the coordinator judges a forwarded one.

extension CoordinatorCore {
    /// Whether worker `name` is registered and serves direct routes: it registered a direct
    /// endpoint and its group's topology entry has `direct` on.
    func servesDirect(_ name: String) -> Bool {
        guard let slot = workers[name], slot.registered, slot.direct != nil else { return false }
        return topology.workers.first { $0.name == slot.group }?.direct == true
    }

    /// The welcome's `direct` part for a worker of `group` that registered a direct endpoint;
    /// `nil` when the group does not serve direct routes.
    func directSettings(forGroup group: String, registered direct: String?) -> DirectSettings? {
        guard direct != nil, topology.workers.first(where: { $0.name == group })?.direct == true else { return nil }
        let limits = topology.limits, queues = topology.queues
        return DirectSettings(
            limits: .init(addressBytes: limits.addressBytes, payloadBytes: maxPayload,
                          owedBytesPerClient: limits.owedBytesPerClient, owedBytes: limits.owedBytes, batchEnvelopes: limits.batchEnvelopes),
            queues: .init(clientOutbox: queues.clientOutbox, clientOutboxBytes: queues.clientOutboxBytes,
                          workerOutbox: queues.workerOutbox, workerOutboxBytes: queues.workerOutboxBytes),
            pool: topology.instances(of: group))
    }

    /// Admits client keys (Z85) with their grants: the topology's at start, a key fsm-launch
    /// makes for its live view later. Each is numbered as a crash report names it; every worker
    /// serving direct routes is sent the new table.
    mutating func admitClients(_ clients: [(key: String, grants: [Topology.ClientGrant])]) -> [CoordinatorAction] {
        for (key, grants) in clients {
            clientGrants[key, default: []] = grants
            _ = containment.number(ofSender: key)
        }
        return pushAccess()
    }

    /// The `access` table as it stands: every admitted key, its number and grants, and the
    /// numbers of the suspended ones.
    mutating func clientTable() -> ClientTable {
        let clients = clientGrants.keys.sorted().map { key in
            ClientTable.Client(key: key, number: containment.number(ofSender: key), grants: clientGrants[key, default: []].map {
                ClientTable.Grant(roles: $0.roles.map(\.rawValue).sorted(), machines: $0.machines)
            })
        }
        let suspended = containment.ledger.suspended.map { key, suspension in
            ClientTable.Suspended(number: containment.number(ofSender: key), crashes: suspension.crashes,
                                  patterns: suspension.patterns.map(\.description))
        }
        return ClientTable(clients: clients, suspended: suspended.sorted { $0.number < $1.number })
    }

    /// `access` to worker `name` only (after its welcome), or to every worker serving direct
    /// routes (`nil`): none when none does.
    mutating func pushAccess(to name: String? = nil) -> [CoordinatorAction] {
        let targets = name.map { [$0] } ?? workerNames.filter(servesDirect)
        guard !targets.isEmpty, let payload = try? WireJSON.encode(clientTable()) else { return [] }
        return targets.map { .toWorker($0, WireMessage(Header(.access), address: $0, payload: payload)) }
    }

    /// The placement view of worker group `group`: its workers handed off, and those whose own
    /// instances are being released back to them.
    func placementView(ofGroup group: String) -> PlacementView {
        let members = topology.instances(of: group)
        var homes: Set<String> = []
        for address in handoff.releasing.keys {
            let parsed = MachineAddress(address)
            if let home = topology.placement(ofMachine: parsed.machine, key: parsed.key), members.contains(home) { homes.insert(home) }
        }
        homes.formUnion(handoff.homesBack.keys.filter(members.contains))
        return PlacementView(generation: registrations, handedOff: members.filter(handoff.handedOff.contains), handingBack: homes.sorted())
    }

    /// `placement` to the workers serving direct routes of each pool with a machine that hands
    /// off whose view changed since it was last sent; to worker `fresh` (just welcomed) whatever
    /// its pool's view, so it starts from the coordinator's.
    mutating func pushPlacement(fresh: String? = nil) -> [CoordinatorAction] {
        guard handoff.grace != nil else { return [] }
        var actions: [CoordinatorAction] = []
        for group in topology.workers where group.direct && topology.machines.contains(where: { $0.worker == group.name && topology.handsOff($0) }) {
            let view = placementView(ofGroup: group.name)
            let changed = placementSent[group.name].map { $0.handedOff != view.handedOff || $0.handingBack != view.handingBack } ?? true
            let targets = group.instanceNames.filter { servesDirect($0) && (changed || $0 == fresh) }
            if changed { placementSent[group.name] = view }
            guard !targets.isEmpty, let payload = try? WireJSON.encode(view) else { continue }
            actions += targets.map { .toWorker($0, WireMessage(Header(.placement), address: $0, payload: payload)) }
        }
        return actions
    }
}
