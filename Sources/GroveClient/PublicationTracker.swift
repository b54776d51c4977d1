package import GroveWire

/// What a watcher learns from the numbers of the publications it receives: the gap logic of
/// ``Watcher``, pure (no sockets), so every rule is tested by feeding numbers.
///
/// The coordinator numbers each topic on its own, 1, 2, 3, … in an epoch
/// (``PublicationSequence``). On one topic, a number more than one past the last one seen
/// means publications were dropped for this watcher (it fell behind); a new epoch means the
/// coordinator restarted, or started counting afresh: numbers start over, and what was missed
/// in between cannot be counted. A number no greater than the last one seen is stale: a
/// snapshot applied since (``apply(_:)``) already holds a newer state.
package struct PublicationTracker: Sendable {
    /// What to make of one publication.
    package struct Verdict: Equatable, Sendable {
        /// The coordinator restarted (or started counting afresh) since the last publication:
        /// the epoch it counted in before, and the new one.
        package var restarted: (from: UInt64, to: UInt64)?
        /// Publications on this topic missed just before this one.
        package var missed: UInt64 = 0
        /// Whether to hand the publication on: `false` for a stale one.
        package var deliver = true

        package static func == (lhs: Verdict, rhs: Verdict) -> Bool {
            lhs.restarted?.from == rhs.restarted?.from && lhs.restarted?.to == rhs.restarted?.to
                && lhs.missed == rhs.missed && lhs.deliver == rhs.deliver
        }
    }

    package private(set) var epoch: UInt64?
    /// The last number seen, by topic. One entry per topic watched.
    private var last: [String: UInt64] = [:]

    package init() {}

    /// Notes a publication on `topic` numbered `sequence` (`nil`: not numbered, from a
    /// coordinator that predates numbering; nothing is tracked then).
    package mutating func observe(topic: String, sequence: PublicationSequence?) -> Verdict {
        guard let sequence else { return Verdict() }
        var verdict = Verdict()
        if let epoch, epoch != sequence.epoch {
            verdict.restarted = (epoch, sequence.epoch)
            last.removeAll()
        }
        epoch = sequence.epoch
        if let seen = last[topic] {
            guard sequence.number > seen else {
                verdict.deliver = false
                return verdict
            }
            verdict.missed = sequence.number - seen - 1
        }
        // The first publication seen on a topic sets where it stands: a watcher that joins
        // late, or a topic that starts while it watches, is not a gap.
        last[topic] = sequence.number
        return verdict
    }

    /// Takes in a snapshot: its states stand at their numbers, so later publications at or
    /// below them are stale and a publication just after them is no gap.
    /// - Returns: The snapshot's entries no older than what was seen: the current state of each
    ///   address, including those whose last publication was seen already (a watcher cannot
    ///   tell from one topic's numbers that its last publications were dropped: only a later
    ///   one shows a gap, so the snapshot is the word on every address). An entry whose topic
    ///   already showed a later publication is left out.
    package mutating func apply(_ snapshot: StateSnapshot) -> [StateSnapshot.Entry] {
        if epoch != snapshot.epoch {
            epoch = snapshot.epoch
            last.removeAll()
        }
        var newer: [StateSnapshot.Entry] = []
        for entry in snapshot.states {
            if let seen = last[entry.topic], seen > entry.sequence { continue }
            last[entry.topic] = entry.sequence
            newer.append(entry)
        }
        return newer
    }
}
