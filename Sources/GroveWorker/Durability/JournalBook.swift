/// Where the live entries of a journal kept in append order sit: for each address, the
/// sequence and the row position of each entry after its record, oldest first. Pure
/// bookkeeping for ``SQLiteMachineStore``, which appends every commit's events at the end of
/// one table (a few contiguous pages per commit, however many machines they belong to) and
/// deletes from its old end.
///
/// An entry is live from its append until its address's journal is truncated through its
/// sequence (a record written) or the address is removed. Rows below ``oldestNeeded`` hold no
/// live entry and can be deleted. An address whose old entries hold that point back while most
/// rows are dead is a laggard: a record written for it frees them (``laggards(limit:)``).
struct JournalBook: Sendable, Equatable {
    struct Entry: Sendable, Equatable {
        var sequence: UInt64
        var position: Int64
    }

    /// The live entries of each address that has any, oldest first.
    private(set) var live: [String: [Entry]] = [:]
    /// The position the next appended row takes.
    private(set) var next: Int64 = 1
    /// Rows below this position are gone (deleted, or never written).
    private(set) var keptFrom: Int64 = 1
    /// How many entries are live, over every address.
    private(set) var liveCount = 0

    /// A row found when the store opened, in position order: live when its sequence is after
    /// `recordSequence`, the sequence of its address's record (nil when it has none: then no
    /// recovery reads it, and it is dead).
    mutating func found(position: Int64, address: String, sequence: UInt64, recordSequence: UInt64?) {
        if next == 1 { keptFrom = position } // the first row found: none below it
        next = max(next, position + 1)
        guard let recordSequence, sequence > recordSequence else { return }
        live[address, default: []].append(Entry(sequence: sequence, position: position))
        liveCount += 1
    }

    /// An event of `address` appended: the position its row takes; nil when `sequence` is not
    /// after the last live entry's of the address (an entry written twice, or out of order).
    mutating func append(_ address: String, sequence: UInt64) -> Int64? {
        if let last = live[address]?.last, last.sequence >= sequence { return nil }
        let position = next
        next += 1
        live[address, default: []].append(Entry(sequence: sequence, position: position))
        liveCount += 1
        return position
    }

    /// The journal of `address` through `sequence` is no longer needed (a record includes it).
    mutating func truncate(_ address: String, through sequence: UInt64) {
        guard var entries = live[address] else { return }
        let kept = entries.firstIndex { $0.sequence > sequence } ?? entries.endIndex
        liveCount -= kept
        entries.removeFirst(kept)
        live[address] = entries.isEmpty ? nil : entries
    }

    /// `address` and its journal are gone.
    mutating func remove(_ address: String) {
        liveCount -= live.removeValue(forKey: address)?.count ?? 0
    }

    /// The positions of the live entries of `address` after `sequence`, oldest first.
    func positions(of address: String, after sequence: UInt64) -> [Int64] {
        (live[address] ?? []).lazy.filter { $0.sequence > sequence }.map(\.position)
    }

    /// The oldest position a live entry holds (``next`` when none is live): every row below it
    /// can be deleted.
    var oldestNeeded: Int64 {
        live.values.reduce(next) { oldest, entries in min(oldest, entries.first?.position ?? oldest) }
    }

    /// Rows below `position` were deleted.
    mutating func deleted(below position: Int64) {
        keptFrom = max(keptFrom, position)
    }

    /// Rows kept that no machine needs any more.
    var deadRows: Int64 { next - keptFrom - Int64(liveCount) }

    /// When dead rows outnumber both the live ones and `slack`, the addresses (at most `limit`)
    /// whose oldest live entries are the oldest: each holds rows back from being deleted, and
    /// a record written for it lets them go. Empty otherwise.
    func laggards(limit: Int, slack: Int64) -> [String] {
        guard limit > 0, deadRows > max(Int64(liveCount), slack) else { return [] }
        let firsts = live.compactMap { address, entries in entries.first.map { (address, $0.position) } }
        return firsts.sorted { $0.1 < $1.1 }.prefix(limit).map(\.0)
    }
}
