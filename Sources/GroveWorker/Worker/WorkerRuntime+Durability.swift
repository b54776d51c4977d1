import Foundation
import GroveCluster
@_spi(GroveInternal) import GroveWire

extension WorkerRuntime {
    /// Opens the store the first time a welcome places a durable machine here, and brings back
    /// every stored instance of a machine placed here durably, keyed ones included, so that
    /// their timers run without waiting for an event; but a passivating machine's keyed
    /// instances that hold only their state stay in the store until their next message, as
    /// passivated ones do (issue 37). A store that cannot be opened ends the
    /// worker with the configuration exit status (its supervisor does not restart it).
    func openStoreAndRecover(_ welcome: Welcome) {
        guard let openStore else {
            failed(.noStore)
            return
        }
        let started = ContinuousClock.now
        var records: [MachineRecord]
        let opened: any MachineStore
        let resting = Passivation.resting(welcome.machines)
        do {
            opened = try openStore(welcome.store)
            store = opened
            records = try opened.records(leavingResting: resting)
            // The poison watch needs the record of each instance a death is counted against.
            if !resting.isEmpty { records += try suspects(in: opened, besides: records) }
        } catch {
            failed(.storeOpen(error.message))
            return
        }
        // Before any durable instance is made: each takes the recorder when it is.
        records = watchForPoison(store: opened, records: records)
        let placed = Dictionary(welcome.machines.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        let notPlaced = recovery.queue(records, placed: placed, running: { instances[$0] != nil })
        recovery.started = started
        log.notice("\(recovery.beginningNotice(opened: ContinuousClock.now - started, notPlaced: notPlaced, resting: resting))")
        recoverSome()
    }

    /// The records, not in `records`, of the instances the last process died running, or that
    /// deaths are counted against: resting ones left in the store, which the poison watch
    /// reads (a `journal` instance's poison event is skipped in its record).
    private func suspects(in store: any MachineStore, besides records: [MachineRecord]) throws(StoreError) -> [MachineRecord] {
        let read = Set(records.map(\.address))
        var addresses = Set(try store.crashes().map(\.address))
        if let unfinishedRun { addresses.insert(unfinishedRun.address) }
        var found: [MachineRecord] = []
        for address in addresses.subtracting(read).sorted() {
            if let record = try store.record(of: address) { found.append(record) }
        }
        return found
    }

    /// Brings back stored instances a chunk at a time, then lets the loop run (messages,
    /// heartbeats) before the next: a worker bringing back 100,000 instances, or instances with
    /// long journals to replay, keeps answering its coordinator. ``Recovery/step(now:turn:)``
    /// decides each step; this carries it out. An instance asked for before its turn comes back
    /// at once (``restoreIfWaiting(_:)``).
    func recoverSome() {
        while true {
            switch recovery.step(now: .now, turn: recoveryTurn) {
            case .restore(let address):
                _ = restoreIfWaiting(address)
            case .pause:
                run(core.tick(now: .now))
                pause(then: .recoverSome)
                return
            case .finished(let notice):
                log.notice("\(notice)")
                return
            }
        }
    }

    /// The instance at `address` brought back from its stored record, when one waits for its
    /// turn; nil otherwise. A `journal` instance's entries after its record are replayed onto
    /// it (``Factory/replaying(_:onto:address:flight:)``). When the record or a journal entry
    /// does not decode, or the store finds the journal `corrupt`, the instance is refused
    /// (``refuseUnreadable(_:why:)``): nil now, and an error for every request to it later.
    func restoreIfWaiting(_ address: String) -> (any HostedMachine)? {
        guard !recovery.waiting.isEmpty, let record = recovery.waiting.removeValue(forKey: address) else { return nil }
        let name = MachineAddress.machine(of: address)
        guard let welcome = core.lastWelcome, let machine = core.placed[name], let factory = factory(for: machine.type) else { return nil }
        var journal: [JournalEntry] = []
        if machine.durability == .journal, let store {
            do {
                journal = try store.journal(of: address, after: record.sequence)
            } catch where error.code == .corrupt {
                refuseUnreadable(address, why: error.message)
                return nil
            } catch {
                // The core ends the worker (WorkerCore+Failures.swift).
                failed(.journalRead(address: address, error.message))
                return nil
            }
        }
        do {
            let made = try make(address, machine, factory: factory, welcome: welcome, record: record, journal: journal)
            // Its kept answers of idempotency keys are read at its first keyed event.
            made.answersInStore()
            instances[address] = made
            queueForSweep(address, made, machine: name)
            // Counted here: an instance asked for before its turn comes back outside recoverSome().
            recovery.restored += 1
            return made
        } catch {
            refuseUnreadable(address, why: error.message)
            return nil
        }
    }

    /// Refuses the instance at `address` from now on, its stored record or journal unreadable
    /// for `why`: starting it from its initial state would write over the state it
    /// acknowledged, at its first commit. The record stays in the store untouched; the worker
    /// serves on (``WorkerFailure/recordUnreadable(address:message:)``).
    func refuseUnreadable(_ address: String, why: String) {
        let refusal = WireError.unreadableRecord(address: address, store: store?.label ?? "the worker's store", worker: link.worker,
                                                 why: why)
        unreadable[address] = refusal
        failed(.recordUnreadable(address: address, message: refusal.message))
    }
}
