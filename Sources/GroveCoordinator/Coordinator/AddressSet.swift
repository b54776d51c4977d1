import GroveCluster

/// A set of addresses: ``InstanceBook``'s per-machine set, which holds every key a client ever
/// started (a million with a million fresh keys). An ``AddressTable`` without values, which
/// hashes each address once (ARCHITECTURE says why it is written here), with the instance
/// limit's check in the same lookup as the insertion.
struct AddressSet: Sequence {
    private var table = AddressTable<Void>()

    var count: Int { table.count }
    var isEmpty: Bool { table.isEmpty }

    func contains(_ address: String) -> Bool { table.probe(address).found }

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
        let probe = table.probe(address)
        if probe.found { return .present }
        if table.count >= limit { return .full }
        table.insert((), for: address, at: probe)
        return .added
    }

    /// Takes `address` out; whether it was there.
    @discardableResult
    mutating func remove(_ address: String) -> Bool {
        table.removeValue(forKey: address) != nil
    }

    struct Iterator: IteratorProtocol {
        fileprivate var slots: AddressTable<Void>.Iterator

        mutating func next() -> String? { slots.next()?.address }
    }

    func makeIterator() -> Iterator { Iterator(slots: table.makeIterator()) }

    var underestimatedCount: Int { table.count }
}
