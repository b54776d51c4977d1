import Foundation
import GroveCluster
import GroveWire

extension WorkerRuntime {
    /// Counts what the last process under this name died running (taken from the flight
    /// recorder when this process started, ``openFlightRecorder()``) against the event at its
    /// address, when that is a durable machine's; at the second crash
    /// (``PoisonWatch/crashesToQuarantine``) the event is quarantined: kept as a dead letter,
    /// taken out of its machine's stored record or skipped in its journal (so recovery does not
    /// run it again), and refused when a client sends it again. Then the store's dead letters
    /// are refused and its suspects watched.
    /// - Returns: `records`, with the quarantined event taken out of its machine's.
    func watchForPoison(store: any MachineStore, records: [MachineRecord]) -> [MachineRecord] {
        guard let recorder = poison.recorder else { return records }
        var records = records
        if let unfinished = unfinishedRun {
            unfinishedRun = nil
            // Only a machine the store keeps has a count to keep; another's crash was reported
            // with the registration, which is all there is to do with it.
            let stored = records.contains { $0.address == unfinished.address }
                || (core.placed[WorkerCore.machineName(of: unfinished.address)]?.durability ?? .none) != .none
            if stored { records = blame(unfinished, store: store, records: records) }
        }
        do {
            for letter in try store.deadLetters() {
                guard let id = letter.id else { continue }
                poison.quarantine(RecordedRun(address: letter.address, event: letter.event, binary: letter.binary, origin: .unknown).identity,
                                       at: letter.address, id: id)
            }
            for crash in try store.crashes() { recorder.suspect(crash.event, at: crash.address) }
        } catch {
            log.error("worker \(link.worker) cannot read its dead letters: \(error.message); quarantined events are not refused")
        }
        return records
    }

    /// Counts the death of the last process against the event it was running, and quarantines
    /// the event at the second.
    private func blame(_ recorded: RecordedRun, store: any MachineStore, records: [MachineRecord]) -> [MachineRecord] {
        let unfinished = canonical(recorded, records: records)
        let address = unfinished.address
        let identity: [UInt8]
        switch core.crashVerdict(unfinished) {
        case .unrecorded(let text):
            log.error("\(text)")
            return records
        case .count(let counted):
            identity = counted
        }
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let crashes: Int
        do {
            crashes = try store.countCrash(of: address, event: identity, at: now)
        } catch {
            log.error("worker \(link.worker) could not count a crash in its store: \(error.message)")
            return records
        }
        var records = records
        let stored = records.firstIndex { $0.address == address }
        let type = core.placed[MachineAddress.machine(of: address)]?.type ?? stored.map { records[$0].type } ?? ""
        let letter: DeadLetter
        switch core.judge(unfinished, crashes: crashes, type: type, now: now) {
        case .forgiven(let text):
            log.warning("\(text)")
            return records
        case .quarantine(let quarantined):
            letter = quarantined
        }
        var commit = StoreCommit()
        commit.flush = StoreFlush(core.lastWelcome?.flush ?? .process)
        commit.deadLetters = [letter]
        var taken = WorkerCore.QuarantineTaking.nothing
        if let stored, let factory = factory(for: records[stored].type) {
            // A `journal` machine with entries after its record replays them, not its record's
            // queue (which they include): the event is skipped there.
            let journal = (try? store.journal(of: address, after: records[stored].sequence)) ?? []
            if !journal.isEmpty {
                if let skipped = factory.skipping(identity, record: records[stored], journal: journal) {
                    records[stored] = skipped
                    commit.records = [skipped]
                    commit.truncations = [(address, skipped.sequence)]
                    taken = .fromJournal
                }
            } else if let rewritten = factory.removing(identity, fromWork: unfinished.origin == .effect, from: records[stored].snapshot) {
                records[stored].snapshot = rewritten
                commit.records = [records[stored]]
                taken = .fromRecord
            }
        }
        do {
            try store.commit(commit)
            try store.forgetCrashes(of: address, event: identity)
        } catch {
            log.error("worker \(link.worker) could not quarantine the event that crashed it: \(error.message)")
            return records
        }
        log.error("\(core.quarantined(unfinished, crashes: crashes, taken: taken))")
        return records
    }

    /// `run` with its event as its machine's type encodes it (decoded, encoded again), which is
    /// what the crash counts, the suspects and the quarantine compare: the recorder keeps an
    /// event from the wire as its sender wrote it, in either codec, JSON with any spacing or key
    /// order. Unchanged when the type is unknown or the event no longer decodes as its event.
    func canonical(_ run: RecordedRun, records: [MachineRecord]) -> RecordedRun {
        guard !run.event.isEmpty else { return run }
        let name = MachineAddress.machine(of: run.address)
        guard let type = core.placed[name]?.type ?? records.first(where: { $0.address == run.address })?.type,
              let factory = factory(for: type) else {
            log.warning("worker \(link.worker) does not know the type of \(run.address); the event it died running is blamed as recorded")
            return run
        }
        guard let canonical = factory.canonical(event: run.event, binary: run.binary) else {
            log.warning("the event worker \(link.worker) died running on \(run.address) no longer decodes as a \(type) event; blamed as recorded")
            return run
        }
        var blamed = run
        (blamed.event, blamed.binary) = canonical
        return blamed
    }

    /// An event under suspicion ran to the end: the deaths counted against it are forgotten.
    func forgive(_ identity: [UInt8], at address: String) {
        do {
            try store?.forgetCrashes(of: address, event: identity)
        } catch {
            log.warning("worker \(link.worker) could not forget a crash in its store: \(error.message)")
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
            for letter in try store.deadLetters() where letter.address == address {
                guard let id = letter.id, try store.removeDeadLetter(id) != nil else { continue }
                poison.release(id)
                let text = "dead letter \(link.worker):\(id) of \(address) dropped with its instance, which its machine removes when it ends "
                    + "(onEnd \"remove\"); the key's next instance is not refused that event"
                log.notice("\(text)")
            }
        } catch {
            let text = "worker \(link.worker) could not drop the dead letters of removed instance \(address): \(error.message); "
                + "they still refuse its events: drop them with fsm-send dead-letters drop"
            log.error("\(text)")
        }
    }

    /// An admin's `dead-letters` request: list this worker's dead letters, drop one, or retry
    /// one (deliver its event once more, answered as that event is).
    func deadLetters(_ request: DeadLetterRequest, correlation: UInt64, address: String) {
        func fail(_ error: WireError) {
            link.send(WireMessage.error(error, correlation: correlation, address: address))
        }
        do throws(StoreError) {
            switch request.action {
            case .list:
                let letters = try store?.deadLetters() ?? []
                let list = DeadLetterList(worker: link.worker, deadLetters: letters.map { letter in
                    // For people: a password in the event stays in the worker's store.
                    let event = factory(for: letter.type)?.json(ofEvent: letter.event, binary: letter.binary, redacted: true)
                        ?? .string("(\(letter.event.count) bytes that do not decode as a \(letter.type) event)")
                    return DeadLetterList.Letter(id: letter.id ?? 0, address: letter.address, type: letter.type, event: event,
                                                 error: letter.error, crashes: letter.crashes, time: letter.time)
                })
                guard let payload = try? WireJSON.encode(list) else { return fail(WireError(.malformedJSON, "the dead letters do not encode")) }
                link.send(.deadLetterList, correlation: correlation, address: address, payload: payload)
            case .drop, .retry:
                guard let id = request.id else {
                    return fail(WireError(.malformedJSON, "a dead-letters \(request.action.rawValue) needs the id of a dead letter: {\"action\":\"\(request.action.rawValue)\",\"id\":3}"))
                }
                guard let letter = try store?.removeDeadLetter(id) else {
                    return fail(WireError(.unknownDeadLetter, "worker \(link.worker) has no dead letter \(id) (dropped or retried already?); "
                        + "list them with `fsm-send dead-letters`"))
                }
                poison.release(id)
                log.notice("dead letter \(link.worker):\(id) of \(letter.address) \(request.action == .drop ? "dropped" : "retried") by an admin")
                if request.action == .drop {
                    link.send(.accepted, correlation: correlation, address: address)
                } else {
                    // As JSON, so that the state comes back as JSON, as any admin's request's does.
                    guard let event = factory(for: letter.type)?.json(ofEvent: letter.event, binary: letter.binary, redacted: false) else {
                        return fail(WireError(.undecodableEvent, "dead letter \(link.worker):\(id) no longer decodes as a \(letter.type) event; "
                            + "it was removed", address: letter.address))
                    }
                    deliver(Array(event.jsonData)[...], flags: [], correlation: correlation, address: letter.address)
                }
            }
        } catch {
            fail(WireError(.unavailable, "worker \(link.worker) cannot read its store: \(error.message)"))
        }
    }
}
