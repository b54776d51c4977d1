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

    /// Writes the instances `release` names that are here, lets them leave memory (their
    /// timers with them: their own worker wakes them), and answers `release` with every
    /// address named, those not here included (nothing of them is live here).
    /// - Parameter address: The message's address, this worker's name.
    func release(_ release: HandoffRelease, address: String) {
        let here = release.addresses.filter { instances[$0] != nil }
        // What they ran since the last commit goes to the store before they leave.
        if !here.isEmpty { commitTurn() }
        for address in here {
            instances[address]?.passivate()
            instances[address] = nil
        }
        // A passivated one waits for a timer here no more: its own worker keeps it now.
        for address in release.addresses { core.passivation.cameBack(address) }
        scheduleWake()
        log.notice("released instances to their own worker", metadata: ["released": "\(here.count)",
                                                                       "named": "\(release.addresses.count)"])
        guard let payload = try? WireJSON.encode(release) else { return }
        link.send(.release, address: address, payload: payload)
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
