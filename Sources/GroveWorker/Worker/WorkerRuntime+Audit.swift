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
            try turn.audit.adopt(welcome.audit, worker: link.worker)
        } catch {
            run([.exit(.auditLogUnusable(worker: link.worker, error.message))])
        }
    }

    /// Writes the audit lines committed since the last write. A log that does not take them
    /// ends the worker (``WorkerExitStatus/storage``) before the replies of those transitions leave: its supervisor
    /// restarts it.
    func writeAudit() {
        do {
            try turn.audit.writePending()
        } catch {
            run([.exit(.auditWriteFailed(worker: link.worker, error.message))])
        }
    }
}
