/// The send times of one connection's requests in flight, by correlation id.
///
/// A connection numbers its requests consecutively, so a ring indexed by id holds them without
/// hashing; an id whose slot is still taken by an older unanswered request (answers can come
/// out of order) waits in a table instead.
///
/// The coordinator's `PendingTable` is the same ring for its requests. They are two types on
/// purpose: one generic type shared across the modules was not specialized in fsm-load (a
/// package-level `@inlinable` did not help) and cost fsm-load 60 % more CPU per event.
struct InFlightTimes {
    /// 0 marks a free slot: correlation ids start at 1.
    private var ids: [UInt64]
    private var times: [Int64]
    private var overflow: [UInt64: Int64] = [:]
    private let mask: Int
    private(set) var count = 0

    /// Room for `window` requests in the ring (more wait in the table).
    init(window: Int) {
        var capacity = 1
        while capacity < window * 2 { capacity <<= 1 }
        ids = Array(repeating: 0, count: capacity)
        times = Array(repeating: 0, count: capacity)
        mask = capacity - 1
    }

    var isEmpty: Bool { count == 0 }

    mutating func insert(_ id: UInt64, sentAt time: Int64) {
        precondition(id != 0, "correlation ids start at 1")
        let slot = Int(truncatingIfNeeded: id) & mask
        if ids[slot] == 0 {
            ids[slot] = id
            times[slot] = time
        } else {
            overflow[id] = time
        }
        count += 1
    }

    /// The send time of `id`, which is then no longer in flight; nil for an id not in flight
    /// (never sent, or answered already).
    mutating func remove(_ id: UInt64) -> Int64? {
        guard id != 0 else { return nil }
        let slot = Int(truncatingIfNeeded: id) & mask
        if ids[slot] == id {
            ids[slot] = 0
            count -= 1
            return times[slot]
        }
        guard let time = overflow.removeValue(forKey: id) else { return nil }
        count -= 1
        return time
    }
}
