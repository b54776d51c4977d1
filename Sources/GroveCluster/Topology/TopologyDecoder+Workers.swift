import GroveWire

extension TopologyDecoder {
    mutating func decodeWorkers(in root: [String: JSONValue]) -> (groups: [Topology.WorkerGroup], names: KnownNames) {
        let field = Field("workers", "[{ \"name\": \"main\" }]", "the worker groups")
        var names = KnownNames()
        var groups: [Topology.WorkerGroup] = []
        var pools: [(path: JSONPath, group: Topology.WorkerGroup)] = []
        guard case .array(let list) = root[field.key] else {
            names.complete = false
            _ = elements(field, in: root, at: .root, required: true)
            return (groups, names)
        }
        if list.isEmpty {
            report(.invalidValue, JSONPath.root.appending(field.key), "no worker groups; add one, e.g. \"workers\": [{ \"name\": \"main\" }]")
        }
        for (path, value) in elements(field, in: root, at: .root, required: true) {
            guard let members = members(
                of: value, at: path, known: TopologyKeys.workerGroup,
                what: "a worker group like { \"name\": \"edge\" }"
            ) else { continue }
            let name = requiredText(Field("name", "\"edge\"", "the group's name"), in: members, at: path)
            if let name {
                checkName(name, at: path.appending("name"), kind: "worker group")
                declare(name, at: path.appending("name"), in: &names, kind: "worker group")
            }
            let countField = Field("count", "2", "how many worker processes the group runs")
            let range = Topology.WorkerGroup.countRange
            var count = optionalCount(countField, in: members, at: path, default: 1, minimum: range.lowerBound)
            // Checked here, before anything names the instances (the pool check below, fsm-launch
            // starting them): a count of a trillion must be an error at once, not a hang. Why the
            // bound is 1,024: Topology.WorkerGroup.countRange.
            if let found = count, found > range.upperBound {
                report(.invalidValue, path.appending(countField.key),
                       "count must be at most \(range.upperBound) worker processes per group, found \(found); run fewer workers "
                       + "per group, or split them over several groups: \(countField.hint)")
                count = nil
            }
            let executable = optionalText(
                Field("executable", "\"fsm-worker\"", "the worker executable, a path or a name next to fsm-launch"),
                in: members, at: path, default: Topology.WorkerGroup.defaultExecutable
            )
            let arguments = optionalTexts(Field("arguments", "[\"--verbose\"]", "extra arguments for every instance"), in: members, at: path)
            let external = optionalFlag(
                Field("external", "true", "whether the group is started by hand"),
                in: members, at: path, default: false
            )
            let supervision = decodeSupervision(in: members, at: path, external: external)
            let key = members["key"].flatMap {
                text($0, Field("key", "\"keys/edge.key\"", "the public key file of the group's workers"), at: path.appending("key"))
            }
            if members["key"] != nil, key == nil { continue }
            let direct = optionalFlag(
                Field("direct", "true", "whether the group's workers serve direct routes"),
                in: members, at: path, default: false
            )
            guard let name, let count, let executable, let arguments, let external, let supervision, let direct else { continue }
            let group = Topology.WorkerGroup(
                name: name, count: count, executable: executable, arguments: arguments, external: external,
                supervision: supervision, key: key, direct: direct
            )
            groups.append(group)
            if count > 1 { pools.append((path, group)) }
        }
        // A pool's instance "data-io-1" must not take the name of another group.
        for (path, pool) in pools {
            for instance in pool.instanceNames {
                if let other = names.paths[instance] {
                    report(.duplicateName, path.appending("name"), "instance '\(instance)' of the pool '\(pool.name)' has the name of the worker group at \(other); rename one of the groups")
                }
            }
        }
        return (groups, names)
    }

    mutating func decodeMachines(
        in root: [String: JSONValue], groups: KnownNames
    ) -> (specs: [Topology.MachineSpec], names: KnownNames, keyed: [String: Bool]) {
        let element = "{ \"name\": \"auth\", \"type\": \"AuthFlow\", \"worker\": \"main\" }"
        let field = Field("machines", "[\(element)]", "the machines")
        var names = KnownNames()
        names.complete = root[field.key].map { if case .array = $0 { true } else { false } } ?? false
        var specs: [Topology.MachineSpec] = []
        var keyed: [String: Bool] = [:]
        for (path, value) in elements(field, in: root, at: .root, required: true) {
            guard let members = members(
                of: value, at: path, known: TopologyKeys.machine,
                what: "a machine like \(element)"
            ) else { continue }
            let name = requiredText(Field("name", "\"auth\"", "the machine's name"), in: members, at: path)
            if let name {
                checkName(name, at: path.appending("name"), kind: "machine")
                declare(name, at: path.appending("name"), in: &names, kind: "machine")
            }
            let type = requiredText(
                Field("type", "\"AuthFlow\"", "the machine type name a worker registered"), in: members, at: path
            )
            let worker = requiredText(
                Field("worker", "\"main\"", "the worker group that hosts this machine"), in: members, at: path
            )
            if let worker {
                resolve(worker, at: path.appending("worker"), in: groups, kind: "worker group", section: "$.workers")
            }
            let isKeyed = optionalFlag(
                Field("keyed", "true", "whether the machine has one instance per key"),
                in: members, at: path, default: false
            )
            let durability = decodeMachineDurability(in: members, at: path)
            let audit = optionalFlag(
                Field("audit", "true", "whether each committed transition goes to the topology's audit log"),
                in: members, at: path, default: false
            )
            let onEnd = decodeEndPolicy(in: members, at: path, keyed: isKeyed)
            let restart = decodeRestartPolicy(in: members, at: path, onEnd: onEnd)
            let passivation = decodePassivation(in: members, at: path, keyed: isKeyed)
            if let name, let isKeyed, keyed[name] == nil { keyed[name] = isKeyed }
            guard let name, let type, let worker, let isKeyed, let durability, let audit, let onEnd, let restart,
                  let passivation else { continue }
            specs.append(Topology.MachineSpec(name: name, type: type, worker: worker, keyed: isKeyed, durability: durability,
                                              audit: audit, onEnd: onEnd, restart: restart, passivateAfterMs: passivation.after))
        }
        return (specs, names, keyed)
    }

    mutating func decodeIO(in root: [String: JSONValue], groups: KnownNames, machines known: KnownNames) -> [Topology.IOPlacement] {
        let element = "{ \"request\": \"Authenticate\", \"worker\": \"io\" }"
        let field = Field("io", "[\(element)]", "where io requests run")
        var requests = KnownNames()
        var placements: [Topology.IOPlacement] = []
        for (path, value) in elements(field, in: root, at: .root, required: false) {
            guard let members = members(
                of: value, at: path, known: TopologyKeys.ioPlacement, what: "an io placement like \(element)"
            ) else { continue }
            let request = requiredText(
                Field("request", "\"Authenticate\"", "the io request name its handler is registered under"),
                in: members, at: path
            )
            if let request {
                if let first = requests.paths[request] {
                    report(.duplicateName, path.appending("request"), "'\(request)' is placed already (at \(first)); a request runs on one group, so keep one entry")
                } else {
                    declare(request, at: path.appending("request"), in: &requests, kind: "io request")
                }
            }
            let worker = requiredText(
                Field("worker", "\"io\"", "the worker group whose handler executes the request"), in: members, at: path
            )
            if let worker {
                resolve(worker, at: path.appending("worker"), in: groups, kind: "worker group", section: "$.workers")
            }
            // Absent: the topology's ioLimits.timeoutMs, decided when a call starts.
            let timeout = members["timeoutMs"] == nil ? Int?.none : optionalCount(
                Field("timeoutMs", "5000", "the milliseconds a call of this request may run before it fails with timeout"),
                in: members, at: path, default: 0, minimum: 1
            )
            if members["timeoutMs"] != nil, timeout == nil { continue }
            var machines: [String]?
            if let listed = members["machines"] {
                guard case .array(let names) = listed, names.allSatisfy({ $0.stringValue != nil }) else {
                    report(.wrongType, path.appending("machines"), "expected an array of machine names like [\"auth\"]: the machines whose "
                        + "instances may start '\(request ?? "this request")'")
                    continue
                }
                machines = names.compactMap(\.stringValue)
                for (index, name) in (machines ?? []).enumerated() {
                    resolve(name, at: path.appending("machines").appending(index: index), in: known, kind: "machine", section: "$.machines")
                }
            }
            guard let request, let worker else { continue }
            placements.append(Topology.IOPlacement(request: request, worker: worker, timeoutMs: timeout, machines: machines))
        }
        return placements
    }
}
