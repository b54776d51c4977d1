import GroveCluster
@_spi(GroveInternal) import GroveWire

// Handoff (issue 37): a pool worker lost for longer than `durability.handoff.graceMs` has its
// keyed durable instances placed on the pool's other workers, which adopt them from the shared
// store (claiming them, so the lost worker's later writes are refused there). When it registers
// again, each worker that adopted some is told to release them; they are routed nowhere until it
// says they left, then to their own worker again. No instance is routed to two workers at once.
// The state is `HandoffBook`; the clock is the ticks'.

extension CoordinatorCore {
    /// The worker instance that hosts the instance of `spec` at `key` now: the topology's
    /// placement, unless handoff moved it. `nil` as ``Topology/placement(ofMachine:key:)``.
    func host(of spec: Topology.MachineSpec, key: String?) -> String? {
        guard let home = topology.placement(ofMachine: spec.name, key: key) else { return nil }
        guard !handoff.isIdle, let key else { return home }
        if let releasing = handoff.releasing[spec.name + "/" + key] { return releasing }
        if handoff.homesBack[home] != nil, topology.handsOff(spec) {
            // Where the pool placed it while its own worker was handed off, until the worker
            // there said it let go (`homesBack`).
            return Topology.host(ofKey: key, pool: topology.instances(of: spec.worker), handedOff: handoff.handedOff.union([home])) ?? home
        }
        guard handoff.handedOff.contains(home), topology.handsOff(spec) else { return home }
        // Every worker of the pool handed off: the instance waits for its own, as without handoff.
        return Topology.host(ofKey: key, pool: topology.instances(of: spec.worker), handedOff: handoff.handedOff) ?? home
    }

    /// Why a client's request for `address` (placed on worker `worker`) waits: its instance is
    /// being released by the worker that adopted it. `nil` when it may go.
    func handoffRefusal(_ address: String) -> WireError? {
        if let releasing = handoff.releasing[address] {
            return WireError(.unavailable, "machine '\(address)' is being handed back from worker \(releasing) to its own worker, "
                             + "which registered again; retry shortly", address: address)
        }
        guard !handoff.homesBack.isEmpty, let home = homeBeingReleased(address) else { return nil }
        return WireError(.unavailable, "machine '\(address)' is being handed back to its own worker \(home), which registered again; "
                         + "retry shortly", address: address)
    }

    /// The own worker of keyed instance `address` when the other workers of its direct pool are
    /// releasing that worker's instances as a whole (`homesBack`); `nil` otherwise.
    func homeBeingReleased(_ address: String) -> String? {
        let parsed = MachineAddress(address)
        guard let key = parsed.key, let spec = topology.machine(named: parsed.machine), spec.keyed, topology.handsOff(spec),
              let home = topology.placement(ofMachine: spec.name, key: key), handoff.homesBack[home] != nil else { return nil }
        return home
    }

    /// The workers that release the instances of `name` as a whole when it registers again:
    /// the other registered workers of its group when that group serves direct routes, where a
    /// client may have had one adopted without the coordinator routing a request for it.
    func directAdopters(of name: String) -> Set<String> {
        guard let group = workers[name]?.group, topology.workers.first(where: { $0.name == group })?.direct == true else { return [] }
        return Set(topology.instances(of: group).filter { $0 != name && servesDirect($0) })
    }

    /// Notes that a request for `address` went to `worker`: when that is not its own worker,
    /// the instance is adopted there, and released when its own comes back.
    mutating func noteHost(_ address: String, worker: Int) {
        let parsed = MachineAddress(address)
        guard let key = parsed.key, let spec = topology.machine(named: parsed.machine), spec.keyed,
              let home = topology.placement(ofMachine: spec.name, key: key) else { return }
        let name = workerNames[worker]
        if name == home {
            handoff.adopted[address] = nil
        } else {
            handoff.adopted[address] = name
        }
    }

    /// At each tick: the grace of workers lost since the last one starts; workers lost past
    /// their grace are handed off.
    mutating func handoffTick(now: ContinuousClock.Instant) -> [CoordinatorAction] {
        guard let grace = handoff.grace else { return [] }
        for name in handoff.justLost where workers[name]?.registered == false && handsOffAny(name) {
            handoff.lostSince[name] = now
        }
        handoff.justLost.removeAll()
        var actions = expireHomesBack(now: now)
        for (name, since) in handoff.lostSince.sorted(by: { $0.key < $1.key }) where now - since >= grace {
            handoff.lostSince[name] = nil
            handoff.handedOff.insert(name)
            registrations += 1
            guard let group = workers[name]?.group else { continue }
            let live = topology.instances(of: group).filter { !handoff.handedOff.contains($0) }
            actions.append(.warn("worker \(name) was lost for more than durability.handoff.graceMs (\(grace.wholeMilliseconds) ms): "
                + (live.isEmpty ? "every worker of group '\(group)' is lost, so its keyed instances wait for it"
                    : "its keyed durable instances are placed on \(live.joined(separator: ", ")) until it registers again")))
        }
        return actions
    }

    /// How long a returning worker's keys wait for the other workers of its direct pool to
    /// answer `release` with `homes`: five heartbeat timeouts, at least 10 s. Past it they go
    /// home all the same; what a silent worker still holds of them, the store fences.
    var homesBackLimit: Duration { .milliseconds(max(10_000, 5 * topology.heartbeat.timeoutMs)) }

    /// Ends the waits of `homesBack` older than ``homesBackLimit``, saying whom they waited for.
    mutating func expireHomesBack(now: ContinuousClock.Instant) -> [CoordinatorAction] {
        handoff.homesBackSince = handoff.homesBackSince.filter { handoff.homesBack[$0.key] != nil }
        var actions: [CoordinatorAction] = []
        for (home, adopters) in handoff.homesBack.sorted(by: { $0.key < $1.key }) {
            guard let since = handoff.homesBackSince[home] else {
                handoff.homesBackSince[home] = now
                continue
            }
            guard now - since >= homesBackLimit else { continue }
            handoff.homesBack[home] = nil
            handoff.homesBackSince[home] = nil
            registrations += 1
            actions.append(.warn("worker(s) \(adopters.sorted().joined(separator: ", ")) did not answer the release of worker \(home)'s "
                + "instances within \(homesBackLimit.wholeMilliseconds) ms (an earlier Grove build?); they go to \(home) now, and the "
                + "shared store refuses any write of them from those workers"))
        }
        return actions
    }

    /// Whether worker `name`'s group holds a machine that hands off.
    func handsOffAny(_ name: String) -> Bool {
        guard let group = workers[name]?.group else { return false }
        return topology.machines.contains { $0.worker == group && topology.handsOff($0) }
    }

    /// Worker `name` was lost: its grace starts at the next tick. What it adopted is placed
    /// anew (its claims in the store are taken over as any lost worker's); it stays noted as
    /// adopted by `name` until another worker gets a request for it, so that its own worker,
    /// once back, is told it has it (`returned`). What it was releasing is free for its own
    /// worker: the `returned` messages to send it.
    mutating func handoffLost(_ name: String) -> [CoordinatorAction] {
        guard handoff.grace != nil else { return [] }
        handoff.justLost.insert(name)
        // What it held of others' instances the store fences; what others held of its own
        // waits for it as before it registered.
        handoff.homesBack[name] = nil
        for home in handoff.homesBack.keys {
            handoff.homesBack[home]?.remove(name)
            if handoff.homesBack[home]?.isEmpty == true { handoff.homesBack[home] = nil }
        }
        let freed = handoff.releasing.filter { $0.value == name }.keys
        handoff.releasing = handoff.releasing.filter { $0.value != name }
        return returnedHome(Array(freed))
    }

    /// `returned` messages to the own workers (registered) of `addresses`.
    func returnedHome(_ addresses: [String]) -> [CoordinatorAction] {
        var home: [String: [String]] = [:]
        for address in addresses {
            let parsed = MachineAddress(address)
            if let own = topology.placement(ofMachine: parsed.machine, key: parsed.key), workers[own]?.registered == true {
                home[own, default: []].append(address)
            }
        }
        return home.sorted { $0.key < $1.key }.flatMap { Self.pages(of: $0.value, kind: .returned, to: $0.key) }
    }

    /// Worker `name` registered: its own instances come back to it. Those other workers
    /// adopted meanwhile are released first: the `release` messages to send. In a direct
    /// pool each other worker releases every one of them it holds (`homes`), named or not.
    mutating func handoffRegistered(_ name: String) -> [CoordinatorAction] {
        handoff.justLost.remove(name)
        handoff.lostSince[name] = nil
        guard handoff.handedOff.remove(name) != nil else { return [] }
        var byWorker: [String: [String]] = [:]
        var back: [String] = []
        for (address, worker) in handoff.adopted {
            let parsed = MachineAddress(address)
            guard topology.placement(ofMachine: parsed.machine, key: parsed.key) == name else { continue }
            handoff.adopted[address] = nil
            // A worker lost meanwhile holds nothing live; the store fences what it still has.
            guard workers[worker]?.registered == true else {
                back.append(address)
                continue
            }
            handoff.releasing[address] = worker
            byWorker[worker, default: []].append(address)
        }
        let adopters = directAdopters(of: name)
        if !adopters.isEmpty { handoff.homesBack[name] = adopters }
        var actions: [CoordinatorAction] = []
        for worker in Set(byWorker.keys).union(adopters).sorted() {
            actions += Self.pages(of: byWorker[worker] ?? [], kind: .release, to: worker, homes: adopters.contains(worker) ? [name] : [])
        }
        return actions + returnedHome(back)
    }

    /// `addresses` in order, in `kind` messages (`release` or `returned`) to `worker`, at most
    /// ``HandoffRelease/pageSize`` a message, `homes` in the last (``HandoffRelease/pages(of:homes:)``).
    static func pages(of addresses: [String], kind: MessageKind, to worker: String, homes: [String] = []) -> [CoordinatorAction] {
        HandoffRelease.pages(of: addresses, homes: homes).compactMap { page in
            guard let payload = try? WireJSON.encode(page) else { return nil }
            return .toWorker(worker, WireMessage(Header(kind), address: worker, payload: payload))
        }
    }

    /// A worker's answer to `release`: the instances it let go of are routed to their own
    /// worker from now on. Addresses it was not asked to release are ignored.
    mutating func released(_ message: WireMessage, by worker: Int) -> [CoordinatorAction] {
        let name = workerNames[worker]
        guard let answer = try? WireJSON.decode(HandoffRelease.self, from: message.payload, code: .malformedFrame) else {
            return [.warn("worker \(name) sent a release answer that does not decode; is it the same Grove version?")]
        }
        // Each goes back to its own worker, which takes those with work due from the store.
        var freed: [String] = []
        for address in answer.addresses {
            if handoff.releasing[address] == name {
                handoff.releasing[address] = nil
                freed.append(address)
            } else if let home = homeBeingReleased(address), handoff.homesBack[home]?.contains(name) == true {
                // One a direct client had it adopt: told to its own worker as any other.
                freed.append(address)
            }
        }
        var homesDone = false
        for home in answer.homes ?? [] where handoff.homesBack[home]?.remove(name) != nil {
            if handoff.homesBack[home]?.isEmpty == true { handoff.homesBack[home] = nil }
            homesDone = true
        }
        if !freed.isEmpty || homesDone { registrations += 1 }
        return returnedHome(freed) + pushPlacement()
    }
}
