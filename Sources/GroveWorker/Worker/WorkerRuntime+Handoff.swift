import GroveCluster
@_spi(GroveInternal) import GroveWire

// Handoff (issue 37), the releasing side: instances this worker adopted while their own worker
// was lost go back once it registers again. The coordinator routes nothing to them meanwhile;
// this writes what they ran, lets them leave memory as passivation does, and says so.

extension WorkerRuntime {
    /// The instance at `address` claimed from the shared store, when its machine hands off
    /// (the welcome says) and the store holds its record: made this worker's in the store, so
    /// the worker that held it before can no longer write it, and restored as recovery does.
    /// Nil otherwise: a key never written starts afresh.
    func adoptHandedOff(_ address: String) -> (any HostedMachine)? {
        adoptHandedOff(address, placed: core.placed[MachineAddress.machine(of: address)])
    }

    /// ``adoptHandedOff(_:)`` given what the core places of its machine (`core.placed`), which
    /// the caller looked up already.
    func adoptHandedOff(_ address: String, placed: Welcome.HostedMachine?) -> (any HostedMachine)? {
        guard let store, let machine = placed, machine.handoff == true else { return nil }
        let record: MachineRecord?
        do {
            record = try store.claim(address)
        } catch {
            failed(.journalRead(address: address, "it could not be claimed from the shared store: " + error.message))
            return nil
        }
        guard let record, record.type == machine.type else { return nil }
        recovery.waiting[address] = record
        return restoreIfWaiting(address)
    }

    /// Notes `release`, carried out at the end of the turn (``releaseAfterCommit()``): the
    /// events this turn handed to its instances run first, and their states and answers are
    /// committed together. Released here, mid-turn, an instance claimed for an event still
    /// queued was dropped with that event in it, never answered, and its retry ran at home
    /// while the store counted it once already (issue 39's handoff case).
    /// - Parameter address: The message's address, this worker's name.
    func release(_ release: HandoffRelease, address: String) {
        releases.append((release, address))
    }

    /// Carries out the turn's `release` messages once it has committed, in a task of its own
    /// on the worker's loop: after the tasks this turn woke, so the watchers' publications of
    /// the instances' last states leave before the answer, which the coordinator takes as the
    /// end of their publishing from here.
    func releaseAfterCommit() {
        guard !releases.isEmpty else { return }
        let due = Swift.exchange(&releases, with: [])
        _ = link.loop.spawn { [weak self] in await self?.carryOut(due) }
    }

    /// Each instance `due` names, and with `homes` each keyed instance here whose own worker
    /// is one of them (a direct client may have had it adopted without the coordinator
    /// knowing), leaves memory if it rests (its timers with it: its own worker wakes them). One
    /// with work still in flight (an event queued, an io call) stays until it is done: its next
    /// commit lands before its own worker claims it, or is refused and drops it
    /// (``dropMoved(_:)``). Each message is answered with every address named or found, those
    /// not here included, `homes` last.
    func carryOut(_ due: [(release: HandoffRelease, address: String)]) {
        // What ran since the turn's commit goes to the store first.
        commitTurn()
        for (release, address) in due {
            let homes = Set(release.homes ?? [])
            let named = homes.isEmpty ? release.addresses : Array(Set(release.addresses).union(instances(homedOn: homes)))
            var released = 0, busy = 0
            for address in named {
                guard let instance = instances[address] else { continue }
                guard instance.resting != .busy else {
                    busy += 1
                    continue
                }
                instance.passivate()
                instances[address] = nil
                released += 1
            }
            // A passivated one waits for a timer here no more: its own worker keeps it now.
            for address in named where instances[address] == nil { core.passivation.cameBack(address) }
            log.notice("released instances to their own worker", metadata: ["released": "\(released)", "busy": "\(busy)",
                                                                           "named": "\(named.count)",
                                                                           "homes": "\(homes.sorted().joined(separator: ","))"])
            for page in HandoffRelease.pages(of: named, homes: release.homes ?? []) {
                guard let payload = try? WireJSON.encode(page) else { continue }
                link.send(.release, address: address, payload: payload)
            }
        }
        scheduleWake()
        link.flush()
    }

    /// The keyed instances here of machines that hand off whose own worker (their key hashed
    /// over the direct pool, nothing handed off) is one of `homes`.
    func instances(homedOn homes: Set<String>) -> [String] {
        guard let pool = link.direct?.pool else { return [] }
        return instances.keys.filter { address in
            let parsed = MachineAddress(address)
            guard let key = parsed.key, core.placed[parsed.machine]?.handoff == true,
                  let home = Topology.host(ofKey: key, pool: pool, handedOff: []) else { return false }
            return homes.contains(home)
        }
    }

    /// Takes back from the shared store those instances `returned` names whose record holds
    /// work (a timer, an io call, a queued event), as a message for them would: claimed and
    /// restored, their timers armed here. The others stay in the store until a message comes.
    /// Before this, an instance handed back waited for its next message even with a timer due.
    func returned(_ returned: HandoffRelease) {
        let due: [String]
        do {
            due = try store?.withWorkDue(among: returned.addresses.filter { instances[$0] == nil }) ?? []
        } catch {
            return failed(.journalRead(address: returned.addresses.first ?? "", "the handed-back instances could not be read: " + error.message))
        }
        var restored = 0
        for address in due where instances[address] == nil {
            if adoptHandedOff(address) != nil { restored += 1 }
        }
        if restored > 0 {
            log.notice("took back handed-back instances with work due", metadata: ["restored": "\(restored)", "named": "\(returned.addresses.count)"])
        }
    }
}
