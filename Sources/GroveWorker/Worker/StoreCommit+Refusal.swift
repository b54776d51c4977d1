extension StoreCommit {
    /// The commit without anything of `addresses`: their records, journal entries, truncations,
    /// removals and idempotency keys' answers (dead letters stay: they are the worker's, not
    /// the machine's). What a worker
    /// commits again after a shared store refused those addresses as another worker's
    /// (handoff), so the other machines of the group commit keep their writes.
    func excluding(_ addresses: Set<String>) -> StoreCommit {
        var kept = self
        kept.records.removeAll { addresses.contains($0.address) }
        kept.journal.removeAll { addresses.contains($0.address) }
        kept.truncations.removeAll { addresses.contains($0.address) }
        kept.removed.removeAll { addresses.contains($0) }
        kept.answers.removeAll { addresses.contains($0.address) }
        kept.forgottenAnswers.removeAll { addresses.contains($0.address) }
        return kept
    }

    /// The addresses of this commit that a refusal names as another worker's, when committing
    /// again without them can succeed: `error` is `rejected` and names addresses this commit
    /// writes. Nil for any other failure, and for a refusal that names none of them (committing
    /// the same again would fail the same way): the worker then fails as for any failed commit.
    func refusedAddresses(in error: StoreError) -> Set<String>? {
        guard error.code == .rejected else { return nil }
        let named = Set(error.refused).intersection(addresses)
        return named.isEmpty ? nil : named
    }

    /// Every address this commit writes or removes.
    var addresses: Set<String> {
        var all = Set(records.map(\.address))
        all.formUnion(journal.map(\.address))
        all.formUnion(truncations.map(\.address))
        all.formUnion(removed)
        return all
    }
}
