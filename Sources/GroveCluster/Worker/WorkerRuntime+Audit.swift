import GroveWire

extension WorkerRuntime {
    /// Ends a turn of the worker's loop: the durable instances that changed are committed, then
    /// the audit lines of the turn's transitions are written, so a durable machine's line never
    /// outlives a commit that failed (the worker exits first). The caller then lets the
    /// replies go.
    func commitTurn() {
        writeDurable()
        writeAudit()
    }

    /// Adopts what a welcome says is audited, opening the log the first time: a log that
    /// cannot be opened ends the worker with the configuration exit status.
    func adoptAudit(_ welcome: Welcome) {
        do {
            try link.audit.adopt(welcome.audit, worker: link.worker)
        } catch {
            run([.exit(status: 78, "worker \(link.worker) cannot keep its audit log: \(error.message)")])
        }
    }

    /// Writes the audit lines committed since the last write. A log that does not take them
    /// ends the worker (74) before the replies of those transitions leave: its supervisor
    /// restarts it.
    func writeAudit() {
        do {
            try link.audit.writePending()
        } catch {
            run([.exit(status: 74, "worker \(link.worker) could not write its audit log: \(error.message)")])
        }
    }
}
