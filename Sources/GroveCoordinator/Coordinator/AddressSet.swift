/// A set of addresses that keeps each one's hash beside it: ``InstanceBook``'s per-machine
/// set, which holds every key a client ever started (a million with a million fresh keys).
///
/// `Set<String>` hashed every address again each time it doubled, into a table seeded anew, so
/// each address landed in a random place of the new one: with a stream of fresh keys that was
/// half the book's cost. Here an address's slot is the top bits of its hash (the process's
/// seeded `Hasher`, as `Set` uses, so clients cannot aim keys at one slot), kept in the
/// table: doubling reads the old slots in order and writes the new ones nearly in order,
/// without hashing anything.
///
/// Open addressing with linear probing, at most three quarters full; a removal shifts the
/// run after it back (no tombstones), so lookups never slow down as instances come and go.
struct AddressSet: Sequence {
    /// The top 32 bits of each slot's address's hash, with the lowest of them set: 0 is a free
    /// slot. Enough for tables of up to 2^31 slots.
    private var tags: [UInt32]
    private var addresses: [String]
    /// The number of addresses held.
    private(set) var count = 0
    /// 32 minus the table's log2 size: a tag shifted right by it is its home slot.
    private var shift: UInt32

    init() {
        tags = Array(repeating: 0, count: 8)
        addresses = Array(repeating: "", count: 8)
        shift = 32 - 3
    }

    var isEmpty: Bool { count == 0 }

    /// `address`'s tag: the top 32 bits of its seeded hash, never 0.
    private static func tag(of address: String) -> UInt32 {
        UInt32(truncatingIfNeeded: UInt64(bitPattern: Int64(address.hashValue)) >> 32) | 1
    }

    /// The slot holding `address`, or the free slot where it would go.
    private func slot(of address: String, tag: UInt32) -> (index: Int, found: Bool) {
        let mask = tags.count - 1
        var index = Int(tag >> shift)
        while true {
            let seen = tags[index]
            if seen == 0 { return (index, false) }
            if seen == tag, addresses[index] == address { return (index, true) }
            index = (index + 1) & mask
        }
    }

    func contains(_ address: String) -> Bool {
        slot(of: address, tag: Self.tag(of: address)).found
    }

    /// Adds `address`; whether it was new.
    @discardableResult
    mutating func insert(_ address: String) -> Bool {
        insert(address, unlessCountReaches: .max) == .added
    }

    enum Insertion: Equatable {
        /// It was not there, and now is.
        case added
        /// It was there already.
        case present
        /// It was not there, and the set holds `limit` addresses or more: not added.
        case full
    }

    /// Adds `address` unless the set holds `limit` addresses already, with one lookup: the
    /// instance limit's check and the insertion hash the address once.
    mutating func insert(_ address: String, unlessCountReaches limit: Int) -> Insertion {
        let tag = Self.tag(of: address)
        var (index, found) = slot(of: address, tag: tag)
        if found { return .present }
        if count >= limit { return .full }
        if (count + 1) * 4 > tags.count * 3 {
            grow()
            index = slot(of: address, tag: tag).index
        }
        tags[index] = tag
        addresses[index] = address
        count += 1
        return .added
    }

    /// Takes `address` out; whether it was there.
    @discardableResult
    mutating func remove(_ address: String) -> Bool {
        var (hole, found) = slot(of: address, tag: Self.tag(of: address))
        guard found else { return false }
        // Backward shift: each address after the hole, up to the next free slot, moves into it
        // unless its home slot lies after the hole (cyclically), where a lookup starts.
        let mask = tags.count - 1
        var next = (hole + 1) & mask
        while tags[next] != 0 {
            let home = Int(tags[next] >> shift)
            if (next - home) & mask >= (next - hole) & mask {
                tags[hole] = tags[next]
                addresses[hole] = addresses[next]
                hole = next
            }
            next = (next + 1) & mask
        }
        tags[hole] = 0
        addresses[hole] = ""
        count -= 1
        return true
    }

    /// Twice the slots. An address's new home is its old one doubled, or that plus one: in
    /// slot order the old table fills the new one front to back.
    private mutating func grow() {
        let oldTags = tags
        let oldAddresses = addresses
        let size = oldTags.count * 2
        precondition(size <= 1 << 31, "an address set of more than 2^31 slots")
        tags = Array(repeating: 0, count: size)
        addresses = Array(repeating: "", count: size)
        shift -= 1
        let mask = size - 1
        for old in oldTags.indices where oldTags[old] != 0 {
            var index = Int(oldTags[old] >> shift)
            while tags[index] != 0 { index = (index + 1) & mask }
            tags[index] = oldTags[old]
            addresses[index] = oldAddresses[old]
        }
    }

    struct Iterator: IteratorProtocol {
        fileprivate let set: AddressSet
        fileprivate var index = 0

        mutating func next() -> String? {
            while index < set.tags.count {
                defer { index += 1 }
                if set.tags[index] != 0 { return set.addresses[index] }
            }
            return nil
        }
    }

    func makeIterator() -> Iterator { Iterator(set: self) }

    var underestimatedCount: Int { count }
}
