package import GroveCluster
package import GroveWire

/// The topology as the page draws it: workers, machines, io groups and routes, and each machine
/// type's state graph (as a worker's `--describe` printed it, the graph `fsm-check` draws).
package enum ViewTopology {
    /// The page's picture of `topology`, with the machines `covers` lets a viewer see.
    /// - Parameters:
    ///   - graphs: Machine type → its state graph's JSON (``GroveCheck/StateGraph``), for the
    ///     types some worker describes; a type without one is drawn as a box.
    package static func json(_ topology: Topology, graphs: [String: JSONValue], covering covers: (String) -> Bool) -> JSONValue {
        let machines = topology.machines.filter { covers($0.name) || $0.keyed }
        return .object([
            "name": .string(topology.name),
            "workers": .array(topology.workers.map { group in
                .object(["name": .string(group.name), "instances": .array(group.instanceNames.map(JSONValue.string)),
                         "external": .bool(group.external)])
            }),
            "machines": .array(machines.map { machine in
                .object(["name": .string(machine.name), "type": .string(machine.type), "worker": .string(machine.worker),
                         "keyed": .bool(machine.keyed)])
            }),
            "io": .array(topology.io.map { placement in
                .object(["request": .string(placement.request), "worker": .string(placement.worker)])
            }),
            "routes": .array(topology.routes.map { route in
                .object(["from": .string(route.from), "when": route.when.map(JSONValue.string) ?? .null, "to": .string(route.to),
                         "event": route.event ?? .null])
            }),
            "graphs": .object(graphs.filter { type in machines.contains { $0.type == type.key } }),
        ])
    }

    /// The machine types a view asks the workers to describe: each type once, with the worker
    /// group whose executable hosts it.
    package static func describedTypes(_ topology: Topology) -> [(type: String, group: String)] {
        var seen: Set<String> = []
        return topology.machines.compactMap { machine in
            seen.insert(machine.type).inserted ? (machine.type, machine.worker) : nil
        }
    }
}
