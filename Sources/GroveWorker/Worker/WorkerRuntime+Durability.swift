import Foundation
import GroveCluster
@_spi(GroveInternal) import GroveWire

extension WorkerRuntime {
    /// Opens the store the first time a welcome places a durable machine here, and brings back
    /// every stored instance of a machine placed here durably, keyed ones included, so that
    /// their timers run without waiting for an event. A store that cannot be opened ends the
    /// worker with the configuration exit status (its supervisor does not restart it).
    func openStoreAndRecover(_ welcome: Welcome) {
        guard let openStore else {
            run([.exit(.noDataDirectory(worker: link.worker))])
            return
        }
        let started = ContinuousClock.now
        var records: [MachineRecord]
        let opened: any MachineStore
        do {
            opened = try openStore()
            store = opened
            records = try opened.records()
        } catch {
            run([.exit(.storeUnusable(worker: link.worker, error.message))])
            return
        }
        // Before any durable instance is made: each takes the recorder when it is.
        records = watchForPoison(store: opened, records: records)
        let placed = Dictionary(welcome.machines.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        let notPlaced = recovery.queue(records, placed: placed, running: { instances[$0] != nil })
        recovery.started = started
        let kept = notPlaced > 0 ? "; \(notPlaced) stored instance(s) of machines not placed here durably are kept, not started" : ""
        log.notice("bringing back \(recovery.waiting.count) durable instance(s) from the store (opened in \(ContinuousClock.now - started))\(kept)")
        recoverSome()
    }

    /// Brings back stored instances for at most ``recoveryTurn`` (at least one, at most
    /// ``Recovery/chunk``), then lets the loop run (messages, heartbeats) before the next
    /// chunk: a worker bringing back 100,000 instances, or instances with long journals to
    /// replay, keeps answering its coordinator. An instance asked for before its turn comes
    /// back at once (``restoreIfWaiting(_:)``).
    func recoverSome() {
        var restored = 0
        let turnEnds = ContinuousClock.now + recoveryTurn
        while Recovery.chunkGoesOn(restored: restored, now: .now, ends: turnEnds), let address = recovery.order.popLast() {
            if restoreIfWaiting(address) != nil { restored += 1 }
        }
        guard recovery.order.isEmpty else {
            // Heartbeats first (the tick task may wait behind the instances' start-up tasks),
            // then a pause in which the loop reads and sends before the next chunk.
            run(core.tick(now: .now))
            Task {
                await self.link.loop.pause()
                self.recoverSome()
            }
            return
        }
        if let started = recovery.started {
            var asked = ""
            if recovery.onDemand > 0 {
                asked = "; \(recovery.onDemand) of them asked for by a message before their turn"
                if recovery.turnsCut > 0 { asked += ", over \(recovery.turnsCut) turn(s) that left the rest of their messages for the next" }
            }
            log.notice("recovered \(recovery.restored) durable instance(s) from the store in \(ContinuousClock.now - started)\(asked)")
            recovery = Recovery()
        }
    }

    /// The instance at `address` brought back from its stored record, when one waits for its
    /// turn; nil otherwise (and when the record or a journal entry does not decode: the
    /// instance then starts from its initial state with its next event, and the record stays
    /// until it writes again). A `journal` instance's entries after its record are replayed
    /// onto it (``Factory/replaying(_:onto:address:flight:)``).
    func restoreIfWaiting(_ address: String) -> (any HostedMachine)? {
        guard let record = recovery.waiting.removeValue(forKey: address) else { return nil }
        let name = MachineAddress.machine(of: address)
        guard let welcome = core.lastWelcome, let machine = core.placed[name], let factory = factory(for: machine.type) else { return nil }
        var journal: [JournalEntry] = []
        if machine.durability == .journal, let store {
            do {
                journal = try store.journal(of: address, after: record.sequence)
            } catch {
                // Started without its journal it would lose acknowledged events, and its first
                // record would bury them: the supervisor restarts the worker instead.
                run([.exit(.journalUnreadable(worker: link.worker, address: address, error.message))])
                return nil
            }
        }
        do {
            let made = try make(address, machine, factory: factory, welcome: welcome, record: record, journal: journal)
            instances[address] = made
            // Counted here: an instance asked for before its turn comes back outside recoverSome().
            recovery.restored += 1
            return made
        } catch {
            log.error("\(error.message); it starts from its initial state when it next gets an event")
            return nil
        }
    }
}
