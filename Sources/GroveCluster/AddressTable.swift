/// A table from addresses to `Value` that keeps each address's hash beside it: the
/// coordinator's instance book (every key a client started, a million with a million fresh
/// keys) and a worker's state tables (each resting instance's state) are these.
///
/// Why not `Dictionary<String, Value>`: with a stream of fresh keys it hashed each address
/// three times and more. Looking a key up and then adding it hashed it twice; each doubling
/// hashed every address again, into a table seeded anew, so each landed in a random place of
/// the new one; and each removal hashed the addresses after it to see which could move back.
/// Here an address is hashed once, for ``probe(_:)``: its slot is the top bits of its hash
/// (the process's seeded `Hasher`, as `Dictionary` uses, so clients cannot aim keys at one
/// slot), kept in the table, so a ``Probe`` that found nothing is where to add it, doubling
/// reads the old slots in order and writes the new ones nearly in order, and a removal moves
/// addresses back by their kept slots. An address, its hash and its value sit side by side, so
/// the probe that finds a free slot has brought in where the address goes.
///
/// Open addressing with linear probing, at most three quarters full; a removal shifts the run
/// after it back (no tombstones), so lookups never slow down as addresses come and go.
///
/// `@usableFromInline`: a worker's state tables run it from inlinable code, specialized for each
/// machine type in the module that names it.
@usableFromInline package struct AddressTable<Value> {
    @usableFromInline
    struct Slot {
        /// The top 32 bits of the address's hash: enough for tables of up to 2^31 slots.
        @usableFromInline var tag: UInt32
        @usableFromInline var address: String
        @usableFromInline var value: Value

        @inlinable
        init(tag: UInt32, address: String, value: Value) {
            self.tag = tag
            self.address = address
            self.value = value
        }
    }

    /// nil is a free slot.
    @usableFromInline var slots: [Slot?]
    @usableFromInline var held = 0

    /// The number of addresses held.
    @inlinable
    @usableFromInline package var count: Int { held }
    /// 32 minus the table's log2 size: a tag shifted right by it is its home slot.
    @usableFromInline var shift: UInt32
    /// The slot ``walk(slots:removing:)`` goes on from.
    @usableFromInline var walkCursor = 0

    @inlinable
    @usableFromInline package init() {
        slots = Array(repeating: nil, count: 8)
        shift = 32 - 3
    }

    @inlinable
    @usableFromInline package var isEmpty: Bool { count == 0 }

    /// Where an address is, or where it would go: good until the table next changes.
    @usableFromInline package struct Probe {
        /// Its slot, or the free slot where it would go.
        @usableFromInline let index: Int
        /// Whether the table holds it.
        @usableFromInline package let found: Bool
        @usableFromInline let tag: UInt32

        @inlinable
        init(index: Int, found: Bool, tag: UInt32) {
            self.index = index
            self.found = found
            self.tag = tag
        }
    }

    /// Where `address` is, or the free slot where it would go: the one hash of it.
    @inlinable
    @usableFromInline package func probe(_ address: String) -> Probe {
        // The top 32 bits of the hash, on any word size.
        let tag = UInt32(truncatingIfNeeded: UInt(bitPattern: address.hashValue) >> (UInt.bitWidth - 32))
        let mask = slots.count - 1
        var index = Int(tag >> shift)
        // The tag read alone, and the address only when it matches: no copy of a slot.
        while let seen = slots[index]?.tag {
            if seen == tag, slots[index]?.address == address { return Probe(index: index, found: true, tag: tag) }
            index = (index + 1) & mask
        }
        return Probe(index: index, found: false, tag: tag)
    }

    /// The value of the address `probe` found.
    @inlinable
    @usableFromInline package subscript(found probe: Probe) -> Value {
        get {
            precondition(probe.found, "a value read where the table holds nothing")
            return slots[probe.index]!.value
        }
        _modify {
            precondition(probe.found, "a value read where the table holds nothing")
            yield &slots[probe.index]!.value
        }
    }

    /// Adds `value` for `address`, where `probe` (of `address`, the table unchanged since)
    /// found nothing.
    @inlinable
    @usableFromInline package mutating func insert(_ value: Value, for address: String, at probe: Probe) {
        precondition(!probe.found, "an address added where the table holds it already")
        var index = probe.index
        precondition(slots[index] == nil, "a probe used after its table changed")
        if (count + 1) * 4 > slots.count * 3 {
            grow()
            let mask = slots.count - 1
            index = Int(probe.tag >> shift)
            while slots[index] != nil { index = (index + 1) & mask }
        }
        slots[index] = Slot(tag: probe.tag, address: address, value: value)
        held += 1
    }

    /// Takes out the address `probe` found; its value.
    @inlinable
    @discardableResult
    @usableFromInline package mutating func remove(at probe: Probe) -> Value {
        precondition(probe.found, "a removal where the table holds nothing")
        return removeSlot(probe.index)
    }

    /// Takes out the address in slot `index`, which holds one; its value.
    @inlinable
    @discardableResult
    mutating func removeSlot(_ index: Int) -> Value {
        var hole = index
        let removed = slots[hole]!.value
        // Backward shift: each address after the hole, up to the next free slot, moves into it
        // unless its home slot lies after the hole (cyclically), where a lookup starts.
        let mask = slots.count - 1
        var next = (hole + 1) & mask
        while let tag = slots[next]?.tag {
            let home = Int(tag >> shift)
            if (next - home) & mask >= (next - hole) & mask {
                // An address the walk has still to reach, moved behind where it stands: the walk
                // goes back for it.
                if next >= walkCursor, hole < walkCursor { walkCursor = hole }
                slots.swapAt(hole, next)
                hole = next
            }
            next = (next + 1) & mask
        }
        slots[hole] = nil
        held -= 1
        return removed
    }

    /// How many slots the table has: what ``walk(slots:removing:)`` goes round.
    @inlinable
    @usableFromInline package var capacity: Int { slots.count }

    /// Walks on `count` slots (at most the table's size) from where the last walk stopped,
    /// round the table, taking out each value `leaves` picks: a sweep a part at a time, with no
    /// lookup by address. The walk reaches every address once per round, whatever changes
    /// between two calls: an address a removal moves back behind the walk takes the walk back
    /// to it (``removeSlot(_:)``), one added behind it is new, and a doubling starts the round
    /// again. A removal moves later addresses back into the slot walked, which is read again.
    /// - Returns: How many it took out, and how many slots it walked.
    @inlinable
    @usableFromInline package mutating func walk(slots count: Int, removing leaves: (Value) -> Bool) -> (removed: Int, walked: Int) {
        let count = Swift.min(Swift.max(0, count), slots.count)
        var removed = 0
        var walked = 0
        while walked < count {
            if walkCursor >= slots.count { walkCursor = 0 }
            if slots[walkCursor] != nil, leaves(slots[walkCursor]!.value) {
                removeSlot(walkCursor)
                removed += 1
            } else {
                walkCursor += 1
                walked += 1
            }
        }
        return (removed, walked)
    }

    /// The value of `address`; setting nil takes it out.
    @inlinable
    @usableFromInline package subscript(address: String) -> Value? {
        get {
            let probe = probe(address)
            return probe.found ? self[found: probe] : nil
        }
        set {
            let probe = probe(address)
            switch (probe.found, newValue) {
            case (true, let value?): self[found: probe] = value
            case (true, nil): remove(at: probe)
            case (false, let value?): insert(value, for: address, at: probe)
            case (false, nil): break
            }
        }
    }

    /// Takes `address` out; its value, nil when it was not there.
    @inlinable
    @discardableResult
    @usableFromInline package mutating func removeValue(forKey address: String) -> Value? {
        let probe = probe(address)
        return probe.found ? remove(at: probe) : nil
    }

    /// Empties the table, down to its first size.
    @inlinable
    @usableFromInline package mutating func removeAll() {
        self = AddressTable()
    }

    /// Twice the slots. An address's new home is its old one doubled, or that plus one: in
    /// slot order the old table fills the new one front to back.
    @inlinable
    mutating func grow() {
        let old = slots
        let size = old.count * 2
        precondition(size <= 1 << 31, "an address table of more than 2^31 slots")
        slots = Array(repeating: nil, count: size)
        shift -= 1
        walkCursor = 0
        let mask = size - 1
        for case let slot? in old {
            var index = Int(slot.tag >> shift)
            while slots[index] != nil { index = (index + 1) & mask }
            slots[index] = slot
        }
    }
}

extension AddressTable: Sequence {
    /// The addresses and their values, in slot order (no order a caller may rely on).
    @usableFromInline package struct Iterator: IteratorProtocol {
        @usableFromInline let slots: [Slot?]
        @usableFromInline var index = 0

        @inlinable
        init(slots: [Slot?]) { self.slots = slots }

        @inlinable
        @usableFromInline package mutating func next() -> (address: String, value: Value)? {
            while index < slots.count {
                defer { index += 1 }
                if let slot = slots[index] { return (slot.address, slot.value) }
            }
            return nil
        }
    }

    @inlinable
    @usableFromInline package func makeIterator() -> Iterator { Iterator(slots: slots) }

    @inlinable
    @usableFromInline package var underestimatedCount: Int { count }

    /// The addresses held, in slot order.
    @inlinable
    @usableFromInline package var addresses: [String] { map(\.address) }
}

extension AddressTable: Sendable where Value: Sendable {}
extension AddressTable.Slot: Sendable where Value: Sendable {}
extension AddressTable.Probe: Sendable {}
