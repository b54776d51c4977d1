/// The keyed instances the coordinator knows of, by machine name, with a generation that
/// changes whenever one is added or taken out: the listing built from them is kept until then
/// (``CoordinatorCore/listingPayload()``), so that a client asking for `list` in a loop costs a
/// copy per request, not a walk over every instance and an encoding.
struct InstanceBook {
    private var byMachine: [String: Set<String>] = [:]
    /// Counts the changes: equal generations, equal contents.
    private(set) var generation: UInt64 = 0

    /// The instances of machine `name` known so far; `nil` when none was ever added.
    subscript(name: String) -> Set<String>? { byMachine[name] }

    /// Adds `address`, an instance of machine `name`; whether it was new.
    @discardableResult
    mutating func insert(_ address: String, of name: String) -> Bool {
        let inserted = byMachine[name, default: []].insert(address).inserted
        if inserted { generation &+= 1 }
        return inserted
    }

    /// Takes `address`, an instance of machine `name`, out; nothing when it was not there.
    mutating func remove(_ address: String, of name: String) {
        if byMachine[name]?.remove(address) != nil { generation &+= 1 }
    }
}
