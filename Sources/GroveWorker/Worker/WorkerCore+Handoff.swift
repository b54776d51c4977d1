// Handoff (issue 37), the side of the worker that lost instances: while it was paused or cut
// off, another worker of its pool adopted some of its keyed instances and claimed them in the
// shared store. What this worker still holds of them is stale: the store refuses its writes
// (``StoreError/refused``), or a check after it registers again finds them owned elsewhere.
// Either way they leave this worker, and the worker serves on.

extension WorkerCore {
    /// At most this many moved addresses are remembered as logged; then the set starts over.
    static let movedToldCapacity = 1024

    /// Instances another worker owns now (handoff): dropped from memory with their wake timers,
    /// their requests answered `unavailable`, and each address logged once with `why`.
    /// - Parameters:
    ///   - addresses: The instances, as the store named them.
    ///   - why: What said so, for the log: the store's refusal, or the ownership check.
    mutating func movedAway(_ addresses: Set<String>, why: String) -> [WorkerAction] {
        guard !addresses.isEmpty else { return [] }
        let sorted = addresses.sorted()
        // A passivated one waits for a timer here no more: its new worker keeps it.
        for address in sorted { passivation.cameBack(address) }
        var actions: [WorkerAction] = [.dropMoved(sorted)]
        for address in sorted where !movedTold.contains(address) {
            if movedTold.count >= Self.movedToldCapacity { movedTold = [] }
            movedTold.insert(address)
            actions.append(.log(.warning, "instance \(address) moved to another worker of the pool (\(why)); "
                + "dropped from memory here, its requests answered unavailable (the client retries; the coordinator routes it "
                + "to its worker)"))
        }
        return actions
    }
}
