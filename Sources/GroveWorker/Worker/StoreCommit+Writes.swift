extension StoreCommit {
    /// One group commit of what a worker's durable instances wrote in a turn: records
    /// (replacing what was stored first for a `journal` instance's first record, and
    /// truncating the journal a record covers), journal entries stamped `time`, and the
    /// addresses of instances that ended and wrote nothing since, and the answers of
    /// idempotency keys the instances kept or let go. Pure: the runtime gathers
    /// the writes and commits what this returns.
    /// - Parameters:
    ///   - writes: What each changed instance wrote (``HostedMachine/write(snapshotEvery:)``).
    ///   - ended: Instances that ended since the last commit: their record and journal go,
    ///     unless they wrote a record in this turn.
    ///   - flush: How far the commit must reach (the topology's `durability.flush`).
    ///   - time: Milliseconds since 1970, asked once, when a journal entry needs it.
    /// - Returns: The commit, and the failures of instances whose record could not be
    ///   written, each with what the store keeps of it instead, for the log.
    static func gathering(_ writes: [DurableWrite], ended: some Sequence<String>, flush: StoreFlush,
                          time: () -> Int64) -> (commit: StoreCommit, failures: [String]) {
        var commit = StoreCommit()
        commit.flush = flush
        var failures: [String] = []
        var now: Int64?
        for write in writes {
            if let failure = write.failure {
                let kept = write.journal.isEmpty ? "its last stored record stays" : "its events are journaled on its last stored record"
                failures.append("\(failure.message); \(kept)")
            }
            if let record = write.record {
                if write.replacesStored { commit.removed.append(record.address) }
                commit.records.append(record)
                if record.sequence > 0 { commit.truncations.append((record.address, record.sequence)) }
            }
            commit.forgottenAnswers += write.forgottenAnswers.map { (write.address, $0) }
            commit.answers += write.answers.map { (write.address, $0) }
            guard !write.journal.isEmpty else { continue }
            let stamp = now ?? time()
            now = stamp
            for event in write.journal {
                commit.journal.append(JournalEntry(address: write.address, sequence: event.sequence, event: event.event, time: stamp))
            }
        }
        let written = Set(commit.records.map(\.address))
        commit.removed += ended.filter { !written.contains($0) }
        return (commit, failures)
    }
}
