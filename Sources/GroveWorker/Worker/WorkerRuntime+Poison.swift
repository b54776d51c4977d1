import GroveCluster
import GroveWire

extension WorkerRuntime {
    /// Counts what the last process under this name died running (taken from the flight
    /// recorder when this process started, ``openFlightRecorder()``) against the event at its
    /// address, when that is a durable machine's; at the second crash
    /// (``PoisonWatch/crashesToQuarantine``) the event is quarantined: kept as a dead letter,
    /// taken out of its machine's stored record or skipped in its journal (so recovery does not
    /// run it again), and refused when a client sends it again. Then the store's crash counts
    /// are read: one at the threshold is a quarantine whose commit failed, finished now
    /// (``WorkerCore/storedCrash(_:deadLetters:)``); the others are watched as suspects. Then
    /// the store's dead letters are refused.
    /// - Returns: `records`, with the quarantined events taken out of their machines'.
    func watchForPoison(store: any MachineStore, records: [MachineRecord]) -> [MachineRecord] {
        guard let recorder = poison.recorder else { return records }
        var records = records
        if let unfinished = unfinishedRun {
            unfinishedRun = nil
            if core.countsCrash(of: unfinished, records: records) {
                let ending: Bool
                (records, ending) = blame(unfinished, store: store, records: records)
                if ending { return records }
            }
        }
        do {
            let letters = try store.deadLetters()
            for crash in try store.crashes() {
                switch core.storedCrash(crash, deadLetters: letters) {
                case .suspect:
                    recorder.suspect(crash.event, at: crash.address)
                case .forget:
                    forgive(crash.event, at: crash.address)
                case .quarantine(let run):
                    let type = core.machineType(at: run.address, records: records)
                    let ending: Bool
                    (records, ending) = quarantine(run, crashes: crash.count, type: type, now: wallMs, store: store, records: records)
                    if ending { return records }
                }
            }
            for letter in try store.deadLetters() {
                guard let id = letter.id else { continue }
                poison.quarantine(RecordedRun(address: letter.address, event: letter.event, binary: letter.binary, origin: .unknown).identity,
                                       at: letter.address, id: id)
            }
        } catch {
            failed(.poisonUnreadable(error.message))
        }
        return records
    }

    /// Counts the death of the last process against the event it was running, and quarantines
    /// the event at the second: the rules are ``WorkerCore``'s (`WorkerCore+Crashes.swift`,
    /// `WorkerCore+Quarantine.swift`, `WorkerCore+Failures.swift`); this reads the store,
    /// commits and logs.
    /// - Returns: `records`, and whether the worker is ending (a quarantine that failed).
    private func blame(_ recorded: RecordedRun, store: any MachineStore, records: [MachineRecord]) -> ([MachineRecord], ending: Bool) {
        let type = core.machineType(at: recorded.address, records: records)
        let (unfinished, warning) = core.canonical(recorded, type: type, codec: type.flatMap(factory(for:)))
        if let warning { log.warning("\(warning)") }
        let identity: [UInt8]
        switch core.crashVerdict(unfinished) {
        case .unrecorded(let text):
            log.error("\(text)")
            return (records, false)
        case .count(let counted):
            identity = counted
        }
        let now = wallMs
        let crashes: Int
        do {
            crashes = try store.countCrash(of: unfinished.address, event: identity, at: now)
        } catch {
            failed(.crashCount(error.message))
            return (records, false)
        }
        return quarantine(unfinished, crashes: crashes, type: type, now: now, store: store, records: records)
    }

    /// Quarantines `run` (canonical) when the core judges its `crashes` enough, in one commit:
    /// its dead letter and its machine's record without it. A commit that fails stores nothing
    /// of it (the record keeps the event, the count stays at the threshold) and is the core's
    /// to rule on (``WorkerFailure/quarantineWrite(address:_:)``: the worker ends before it runs
    /// anything, and its next process finishes the quarantine from the count,
    /// ``WorkerCore/storedCrash(_:deadLetters:)``).
    /// - Parameter now: Milliseconds since 1970, for the dead letter.
    /// - Returns: `records`, and whether the worker is ending.
    private func quarantine(_ run: RecordedRun, crashes: Int, type: String?, now: Int64, store: any MachineStore,
                            records: [MachineRecord]) -> ([MachineRecord], ending: Bool) {
        let letter: DeadLetter
        switch core.judge(run, crashes: crashes, type: type ?? "", now: now) {
        case .forgiven(let text):
            log.warning("\(text)")
            return (records, false)
        case .quarantine(let quarantined):
            letter = quarantined
        }
        let address = run.address
        var records = records
        let stored = records.firstIndex { $0.address == address }
        let record = stored.map { records[$0] }
        let journal = record.map { (try? store.journal(of: address, after: $0.sequence)) ?? [] } ?? []
        let plan = core.quarantinePlan(run, letter: letter, crashes: crashes, record: record, journal: journal,
                                       codec: record.flatMap { factory(for: $0.type) })
        // Taken out of what this process brings back whatever the commit does: the worker ends
        // when it fails, and nothing may run the event in between (a test's `end` returns).
        if let stored, let changed = plan.record { records[stored] = changed }
        do {
            try store.commit(plan.commit)
        } catch {
            failed(.quarantineWrite(address: address, error.message))
            return (records, true)
        }
        log.error("\(plan.line)")
        // Committed: a count left behind is forgotten by the next start, which finds the letter.
        forgive(run.identity, at: address)
        return (records, false)
    }

    /// An event under suspicion ran to the end: the deaths counted against it are forgotten.
    func forgive(_ identity: [UInt8], at address: String) {
        do {
            try store?.forgetCrashes(of: address, event: identity)
        } catch {
            failed(.crashForget(error.message))
        }
    }

    /// The keyed instance at `address` was removed when it ended (`onEnd: "remove"`): its dead
    /// letters and the crashes counted against its events go with it, so the key's next
    /// instance, a new machine, is neither refused the events that crashed the old one nor
    /// quarantined at its first crash. Each dropped dead letter is logged, for the record. One
    /// atomic load when nothing is quarantined or suspected at that address.
    func dropPoison(of address: String) {
        guard let store else { return }
        for identity in poison.recorder?.forgetSuspects(at: address) ?? [] { forgive(identity, at: address) }
        guard poison.hasQuarantined(address) else { return }
        do throws(StoreError) {
            for id in core.deadLetters(droppedWith: address, from: try store.deadLetters()) {
                guard try store.removeDeadLetter(id) != nil else { continue }
                poison.release(id)
                log.notice("\(core.droppedWithInstance(id, address: address))")
            }
        } catch {
            log.error("\(core.dropFailed(at: address, error))")
        }
    }

    /// An admin's `dead-letters` request: list this worker's dead letters, drop one, or retry
    /// one (deliver its event once more, answered as that event is). The answers are
    /// ``WorkerCore``'s (`WorkerCore+DeadLetters.swift`); this reads the store and carries
    /// them out.
    func deadLetters(_ request: DeadLetterRequest, correlation: UInt64, address: String) {
        let actions: [WorkerCore.DeadLetterAction]
        do throws(StoreError) {
            switch core.deadLetterRead(request) {
            case .list:
                actions = core.listing(try store?.deadLetters() ?? [], codec: factory(for:))
            case .remove(let id):
                actions = core.removed(try store?.removeDeadLetter(id), id: id, by: request, codec: factory(for:))
            case .refuse(let error):
                actions = [.fail(error)]
            }
        } catch {
            actions = core.deadLettersUnavailable(error)
        }
        for action in actions {
            switch action {
            case .fail(let error):
                link.send(WireMessage.error(error, correlation: correlation, address: address))
            case .list(let payload):
                link.send(.deadLetterList, correlation: correlation, address: address, payload: payload)
            case .accept:
                link.send(.accepted, correlation: correlation, address: address)
            case .release(let id):
                poison.release(id)
            case .deliver(let event, let machine):
                deliver(event[...], flags: [], correlation: correlation, address: machine)
            case .log(let level, let line):
                log.log(level: level, "\(line)")
            }
        }
    }
}
