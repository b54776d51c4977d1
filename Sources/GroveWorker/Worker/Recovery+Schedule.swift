/// When recovery brings the stored instances back, when it lets the loop run, and what it says
/// when it is over: decided here with the clock's `now` as an argument, and carried out by the
/// runtime (``WorkerRuntime/recoverSome()``). `RecoveryTests` drive it with fixed instants.
extension Recovery {
    /// What the runtime does next to bring stored instances back.
    enum Step: Equatable {
        /// Bring back the instance at this address, waiting in ``Recovery/waiting`` (the
        /// runtime's ``WorkerRuntime/restoreIfWaiting(_:)``), then ask again.
        case restore(String)
        /// This chunk is over with instances still waiting: heartbeats due go first (the tick
        /// task may wait behind the instances' start-up tasks), then a pause in which the loop
        /// reads and sends, then the next chunk.
        case pause
        /// Every stored instance is back (or was asked for, or did not decode): log this line.
        /// The recovery is reset.
        case finished(notice: String)
    }

    /// The next step at `now`. A chunk begins with the first step after a pause and lasts
    /// `turn`: one instance always comes back in it (a slow one must not stop recovery), at
    /// most ``chunk``, and no more once `now` reaches its end (``chunkGoesOn``). Addresses
    /// brought back on demand before their turn are skipped.
    mutating func step(now: ContinuousClock.Instant, turn: Duration) -> Step {
        let chunk = chunkUnderway ?? (restored: 0, ends: now + turn)
        while Recovery.chunkGoesOn(restored: chunk.restored, now: now, ends: chunk.ends), let address = order.popLast() {
            guard waiting[address] != nil else { continue }
            chunkUnderway = (chunk.restored + 1, chunk.ends)
            return .restore(address)
        }
        chunkUnderway = nil
        if !order.isEmpty && !waiting.isEmpty { return .pause }
        let notice = finishedNotice(now: now)
        self = Recovery()
        return .finished(notice: notice)
    }

    /// The line logged when recovery is over, at `now`: how many came back, in how long, and how
    /// many of them messages asked for before their turn, over how many cut turns.
    func finishedNotice(now: ContinuousClock.Instant) -> String {
        var asked = ""
        if onDemand > 0 {
            asked = "; \(onDemand) of them asked for by a message before their turn"
            if turnsCut > 0 { asked += ", over \(turnsCut) turn(s) that left the rest of their messages for the next" }
        }
        return "recovered \(restored) durable instance(s) from the store in \(now - (started ?? now))\(asked)"
    }

    /// The line logged when recovery begins: how many instances wait, how long the store took
    /// to open, and how many stored instances stay in the store (``queue(_:placed:running:)``).
    /// With `resting` (``Passivation/resting(_:)``), it says that their idle instances stayed.
    func beginningNotice(opened: Duration, notPlaced: Int, resting: Set<String> = []) -> String {
        let kept = notPlaced > 0 ? "; \(notPlaced) stored instance(s) of machines not placed here durably are kept, not started" : ""
        let rest = resting.isEmpty ? ""
            : "; the idle keyed instances of \(resting.sorted().joined(separator: ", ")) stay in the store until their next message"
        return "bringing back \(waiting.count) durable instance(s) from the store (opened in \(opened))\(kept)\(rest)"
    }

    /// A turn of the loop ended with `parked` messages left or not: a turn that leaves messages
    /// was cut (counted for ``finishedNotice(now:)``), and one turn for them is scheduled after
    /// a pause, unless one is already.
    /// - Returns: Whether to schedule that turn: heartbeats due first, then a pause, then
    ///   ``ParkedInbound/pauseEnded()``.
    mutating func turnEnded(leaving parked: inout ParkedInbound) -> Bool {
        guard !parked.isEmpty else { return false }
        turnsCut += 1
        guard !parked.resumeScheduled else { return false }
        parked.resumeScheduled = true
        return true
    }
}
