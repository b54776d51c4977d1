/// The requests forwarded to workers and not answered yet, by the id they travel under.
///
/// Ids are handed out in order and most requests are answered in about that order, so a ring
/// indexed by id holds them without hashing; an id whose slot an older unanswered request
/// still takes waits in a dictionary instead.
struct PendingTable {
    typealias Pending = CoordinatorCore.Pending

    private static let ringSize = 1 << 14
    /// 0 marks a free slot: ids start at 1.
    private var ids = [UInt64](repeating: 0, count: ringSize)
    private var slots = [Pending?](repeating: nil, count: ringSize)
    private var overflow: [UInt64: Pending] = [:]
    private(set) var count = 0

    var isEmpty: Bool { count == 0 }

    /// Every id pending, in no particular order.
    var keys: [UInt64] { ids.filter { $0 != 0 } + overflow.keys }

    subscript(id: UInt64) -> Pending? {
        let slot = Self.slot(of: id)
        if id != 0, ids[slot] == id { return slots[slot] }
        return overflow[id]
    }

    /// Adds the request forwarded under `id`, which must not be pending already.
    mutating func insert(_ request: consuming Pending, for id: UInt64) {
        precondition(id != 0, "request ids start at 1")
        let slot = Self.slot(of: id)
        if ids[slot] == 0 {
            ids[slot] = id
            slots[slot] = request
        } else {
            overflow[id] = request
        }
        count += 1
    }

    /// Takes the request forwarded under `id` off the table.
    mutating func removeValue(forKey id: UInt64) -> Pending? {
        guard id != 0 else { return nil }
        let slot = Self.slot(of: id)
        if ids[slot] == id {
            ids[slot] = 0
            count -= 1
            return slots[slot].take()
        }
        guard let request = overflow.removeValue(forKey: id) else { return nil }
        count -= 1
        return request
    }

    /// Takes every request sent to worker number `worker` off the table, in id order.
    mutating func removeAll(sentTo worker: Int) -> [(id: UInt64, request: Pending)] {
        var taken: [(id: UInt64, request: Pending)] = []
        for slot in ids.indices where ids[slot] != 0 && slots[slot]?.worker == worker {
            taken.append((ids[slot], slots[slot].take()!))
            ids[slot] = 0
        }
        for (id, request) in overflow where request.worker == worker {
            overflow[id] = nil
            taken.append((id, request))
        }
        count -= taken.count
        return taken.sorted { $0.id < $1.id }
    }

    private static func slot(of id: UInt64) -> Int {
        Int(truncatingIfNeeded: id) & (ringSize - 1)
    }
}
