import GroveCluster
@_spi(GroveInternal) import GroveWire

// The runtime's side of resting states (StateTable.swift): which machines rest as their
// state alone, events run there, and the hosts made when a transition or a request needs one.

extension WorkerRuntime {
    /// The tables of the machines a welcome places here whose idle instances may rest as their
    /// state alone: keyed, passivating, keeping nothing in a store, of a type that starts with
    /// no effect and has no outputs (``StateTable/admits(initial:)``), not audited (the audit
    /// trail is the host's), and with metrics off (a host times its transitions for them). A
    /// table kept from the last welcome keeps its entries; the entries of one that no longer
    /// applies become hosts, and those of a machine in `dropping` (no longer placed here as
    /// before) go with it, as its hosts do.
    func adoptStateTables(_ welcome: Welcome, dropping: Set<String>) {
        var tables: [String: any AnyStateTable] = [:]
        let audited = Set(welcome.audit?.machines ?? [])
        let metricsOn = welcome.metrics == true
        for machine in welcome.machines
        where machine.keyed && (machine.durability ?? Durability.none) == Durability.none && (machine.passivateAfterMs ?? 0) > 0
            && !audited.contains(machine.name) && !metricsOn {
            if let kept = stateTables[machine.name], !dropping.contains(machine.name) {
                tables[machine.name] = kept
            } else if let table = factories[machine.type]?.stateTable(type: machine.type) {
                table.mayHaveHosts = instances.keys.contains { MachineAddress.machine(of: $0) == machine.name }
                tables[machine.name] = table
                log.notice("the idle instances of \(machine.name) rest as their state alone: a host is made for one only when a transition or a request needs it")
            }
        }
        let left = stateTables.filter { tables[$0.key] !== $0.value }
        stateTables = tables
        for (name, table) in left {
            let entries = table.takeAll()
            guard core.placed[name] != nil, !dropping.contains(name) else { continue }
            for (address, start) in entries where instances[address] == nil {
                do {
                    _ = try makeHost(fromTable: address, from: start)
                } catch {
                    log.warning("the resting instance \(address) could not move to a host: \(error.message); it starts afresh at its next event")
                }
            }
        }
    }

    /// An event without an idempotency key for `address`, when its machine's instances rest
    /// here (``resting``): run in the table, on its host when it has one, or, for a key not
    /// in memory, in a new entry. False when the event is not for the table: not a resting
    /// machine's, a quarantine pattern is in force (checked by hosts), or the address is
    /// watched (a watcher needs a host to publish from).
    func deliverIfInTable(_ payload: ArraySlice<UInt8>, flags: Header.Flags, correlation: UInt64, address: String) -> Bool {
        guard let slash = address.utf8.firstIndex(of: UInt8(ascii: "/")) else { return false }
        let name: String
        let table: any AnyStateTable
        // The name compared in place with the last one's (a byte comparison for the ASCII names
        // topologies mostly have): a run of one machine's events makes no string of it.
        if let last = lastStateTable, address[..<slash] == last.name {
            (name, table) = last
        } else {
            name = String(address[..<slash])
            guard let found = stateTables[name] else { return false }
            table = found
            lastStateTable = (name, found)
        }
        guard core.welcomed, !poison.hasPatterns, !observation.watches(stateOf: address), !observation.watches(effectsOf: address)
        else { return false }
        let binary = flags.contains(.binary)
        let noWait = flags.contains(.noWait)
        let sweep = core.passivation.sweep
        let reply = noWait ? nil : StateReply(link: link, correlation: correlation, address: address, binary: binary)
        // While the machine has had no host, a key with no entry is new, and the one call
        // makes it; else the hosts are asked first. A new entry is not queued for passivation:
        // the sweep walks the table (``AnyStateTable/sweep(_:idleThrough:slots:)``).
        let hostless = !table.mayHaveHosts
        let event = TableEvent(address: address, payload: payload, binary: binary, correlation: correlation, reply: reply,
                               sweep: sweep, recorder: flightRecorder)
        var outcome = table.run(event, fresh: hostless)
        if case .absent = outcome {
            if let existing = instances[address] {
                existing.touch(sweep)
                deliver(payload, flags: flags, correlation: correlation, address: address, to: existing)
                return true
            }
            outcome = table.run(event, fresh: true)
        }
        switch outcome {
        case .absent:
            preconditionFailure("a state table made no entry for \(address) when told to")
        case .ran:
            if noWait { link.send(.accepted, correlation: correlation, address: address) }
        case .refused(let error):
            link.send(WireMessage.error(error, correlation: correlation, address: address))
        case .needsHost(let start):
            let made: any HostedMachine
            do {
                made = try makeHost(fromTable: address, from: start)
            } catch {
                // Not committed: the entry stays where it was (a new key at its initial state,
                // as for any refused event), and the event is refused.
                table.putBack(address, start, touched: core.passivation.sweep)
                link.send(WireMessage.error(error, correlation: correlation, address: address))
                return true
            }
            if let refused = made.takeOver(start, reply: reply) {
                link.send(WireMessage.error(refused, correlation: correlation, address: address))
            } else if noWait {
                link.send(.accepted, correlation: correlation, address: address)
            }
        }
        return true
    }

    /// The resting instance at `address` taken out of its table for a host, when it rests:
    /// what a request other than a plain event (a read, a stop, an idempotency key, a watcher)
    /// finds instead of a table entry.
    func hostFromTable(_ address: String) throws(WireError) -> (any HostedMachine)? {
        guard !stateTables.isEmpty, MachineAddress.hasKey(address) else { return nil }
        let name = MachineAddress.machine(of: address)
        guard let table = stateTables[name], let start = table.take(address) else { return nil }
        do {
            return try makeHost(fromTable: address, from: start)
        } catch {
            table.putBack(address, start, touched: core.passivation.sweep)
            throw error
        }
    }

    /// The state of the resting instance at `address`, for a `get`, answered from its table
    /// (nothing is queued ahead of it there); nil when it does not rest here.
    func tableState(_ address: String) -> Result<[UInt8], WireError>? {
        guard !stateTables.isEmpty, MachineAddress.hasKey(address), let table = stateTables[MachineAddress.machine(of: address)] else {
            return nil
        }
        return table.state(at: address)
    }

    /// A host at `address`, started from `start`, listed and queued for the passivation sweep
    /// like any instance made for an event.
    func makeHost(fromTable address: String, from start: any TableHandover) throws(WireError) -> any HostedMachine {
        let name = MachineAddress.machine(of: address)
        guard let machine = core.placed[name], let factory = factories[machine.type], let welcome = core.lastWelcome else {
            throw WireError(.unknownMachine, "worker \(link.worker) cannot host '\(address)' now", address: address)
        }
        let made = try make(address, machine, factory: factory, welcome: welcome, record: nil, startsNow: true, handover: start)
        made.touch(core.passivation.sweep)
        instances[address] = made
        queueForSweep(address, made, machine: name)
        return made
    }

    /// Moves the resting instances a watcher now watches to hosts, which publish. Per table,
    /// the prefixes are read against its machine's topics first: a prefix that names an
    /// instance resting here (the common case) moves that one; one that covers the whole
    /// machine moves them all; one that names part of a key (or an instance not resting here)
    /// walks the table for addresses it begins; and a table no prefix reaches is not walked: a
    /// watcher of another machine costs no walk of a million entries.
    func hostWatchedTableEntries() {
        guard observation.watchesAnything, !stateTables.isEmpty else { return }
        let prefixes = observation.prefixes
        for (name, table) in stateTables {
            var named: Set<String> = []
            var keyPrefixes: [String] = []
            var all = false
            for prefix in prefixes {
                for kind in ["state:", "effect:"] {
                    let machineTopic = kind + name + "/"
                    if machineTopic.hasPrefix(prefix) {
                        all = true
                    } else if prefix.hasPrefix(machineTopic) {
                        let address = String(prefix.dropFirst(kind.count))
                        if table.holds(address) {
                            named.insert(address)
                        } else if instances[address] == nil {
                            keyPrefixes.append(address)
                        }
                    }
                }
            }
            var watched = Array(named)
            if all {
                watched = table.addresses
            } else if !keyPrefixes.isEmpty {
                watched += table.addresses.filter { address in !named.contains(address) && keyPrefixes.contains { address.hasPrefix($0) } }
            }
            for address in watched {
                do {
                    _ = try hostFromTable(address)
                } catch {
                    log.warning("the resting instance \(address) could not move to a host for its watcher: \(error.message)")
                }
            }
        }
    }

    /// Whether the instance at `address` rests here as its state alone.
    func inStateTable(_ address: String) -> Bool {
        guard !stateTables.isEmpty, MachineAddress.hasKey(address), let table = stateTables[MachineAddress.machine(of: address)] else {
            return false
        }
        return table.holds(address)
    }

    /// How many instances rest as their state alone.
    var tableEntryCount: Int { stateTables.values.reduce(0) { $0 + $1.count } }

    /// The addresses of the instances resting as their state alone.
    var tableAddresses: [String] { stateTables.values.flatMap(\.addresses) }
}
