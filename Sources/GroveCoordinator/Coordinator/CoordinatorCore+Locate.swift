import GroveCluster
@_spi(GroveInternal) import GroveWire

// `locate` (issue 39, docs/DIRECT-ROUTES.md 1.1): the coordinator as the directory of where
// machines live. A client asks once per machine, caches the answer and computes a key's worker
// from it as `host(of:key:)` does; the answer says nothing per key, so it is small and the same
// for every instance of a machine.

extension CoordinatorCore {
    /// The answer to a client's `locate`: a `location` naming the machine's workers, or why not
    /// (an `error`). Any role on the machine addressed allows it, so a key that may only send
    /// can find where to send.
    func locate(_ request: MessageView, as principal: Gatekeeper.Principal?) -> WireMessage {
        let correlation = request.correlation
        let address: String
        do {
            address = try request.address()
        } catch {
            return WireMessage.error(error, correlation: correlation)
        }
        if !AddressChecks.isPrintableASCII(request.addressBytes) {
            if let control = AddressChecks.controlCharacter(in: address) {
                return WireMessage.error(AddressChecks.controlInAddress(control, correlation: correlation), correlation: correlation)
            }
            guard AddressChecks.isNFC(address) else {
                return WireMessage.error(AddressChecks.notNFC(address, correlation: correlation), correlation: correlation)
            }
        }
        if case .trusted? = principal {} else if let refusal = ClientAccess.forbidden(.locate, address: address, for: principal) {
            return WireMessage.error(refusal, correlation: correlation)
        }
        let found: Location
        do {
            found = try location(of: address)
        } catch {
            return WireMessage.error(error, correlation: correlation)
        }
        // Names, endpoints and numbers: nothing in it fails to encode.
        return WireMessage(Header(.location, correlation: correlation), payload: (try? WireJSON.encode(found)) ?? [])
    }

    /// Where the machine of `address` lives now: its group's workers in placement order (one
    /// for a single machine), each with its state. A key in `address` is checked for form, then
    /// ignored: the answer is per machine.
    func location(of address: String) throws(WireError) -> Location {
        let parsed = MachineAddress(address)
        guard let spec = topology.machine(named: parsed.machine) else {
            let known = topology.machines.map(\.name).joined(separator: ", ")
            throw WireError(.unknownMachine, "no machine named '\(parsed.machine)' in topology '\(topology.name)'; known machines: \(known)",
                            address: address)
        }
        if spec.keyed, parsed.key?.isEmpty == true {
            throw WireError(.unknownMachine, "machine '\(spec.name)' is keyed; locate it as \(spec.name) or an instance as \(spec.name)/<key>",
                            address: address)
        }
        if !spec.keyed, parsed.key != nil {
            throw WireError(.unknownMachine, "machine '\(spec.name)' is not keyed; locate it as \(spec.name)", address: address)
        }
        let members = spec.keyed ? topology.instances(of: spec.worker) : topology.placement(ofMachine: spec.name, key: nil).map { [$0] } ?? []
        let handsOff = topology.handsOff(spec)
        return Location(machine: spec.name, keyed: spec.keyed, generation: registrations, heartbeatMs: topology.heartbeat.timeoutMs,
                        workers: members.map { locationEntry(of: $0, handsOff: handsOff) },
                        handingBack: handsOff ? handingBack(of: spec.name) : [])
    }

    /// Worker `name` as `location` lists it. A handed-off worker is listed so only for a machine
    /// that hands off: the keys of others wait for their own worker, as `host(of:key:)` routes them.
    func locationEntry(of name: String, handsOff: Bool) -> Location.Worker {
        guard let slot = workers[name], slot.registered else {
            return Location.Worker(name: name, state: handsOff && handoff.handedOff.contains(name) ? .handedOff : .lost)
        }
        guard let direct = slot.direct else { return Location.Worker(name: name, state: .noDirect) }
        return Location.Worker(name: name, state: .registered, endpoint: direct, serverKey: slot.serverKey, incarnation: slot.incarnation)
    }

    /// The own workers of `machine`'s instances being handed back to them now, sorted.
    func handingBack(of machine: String) -> [String] {
        guard !handoff.releasesNone else { return [] }
        var homes: Set<String> = []
        if let spec = topology.machine(named: machine) {
            homes.formUnion(handoff.homesBack.keys.filter(topology.instances(of: spec.worker).contains))
        }
        for address in handoff.releasing.keys {
            let parsed = MachineAddress(address)
            if parsed.machine == machine, let home = topology.placement(ofMachine: machine, key: parsed.key) { homes.insert(home) }
        }
        return homes.sorted()
    }
}
