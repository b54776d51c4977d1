/// The keyed instances the coordinator knows of, by machine name, with a generation that
/// changes whenever one is added or taken out: the listing built from them is kept until then
/// (``CoordinatorCore/listingPayload()``), so that a client asking for `list` in a loop costs a
/// copy per request, not a walk over every instance and an encoding.
///
/// Every key a client starts passes here, a million of them with a million fresh keys: each
/// machine's are an ``AddressSet``, which grows without hashing its addresses again.
struct InstanceBook {
    private var byMachine: [String: AddressSet] = [:]
    /// Counts the changes: equal generations, equal contents.
    private(set) var generation: UInt64 = 0

    /// The instances of machine `name` known so far; `nil` when none was ever added.
    subscript(name: String) -> AddressSet? { byMachine[name] }

    /// Adds `address`, an instance of machine `name`; whether it was new.
    @discardableResult
    mutating func insert(_ address: String, of name: String) -> Bool {
        admit(address, of: name, limit: .max) == .added
    }

    /// Adds `address`, an instance of machine `name`, unless that machine has `limit`
    /// instances already: the limit's check and the insertion look the address up once. The
    /// first instance of a machine is admitted whatever the limit, as it always was.
    mutating func admit(_ address: String, of name: String, limit: Int) -> AddressSet.Insertion {
        let limit = limit <= 0 && byMachine[name] == nil ? .max : limit
        let insertion = byMachine[name, default: AddressSet()].insert(address, unlessCountReaches: limit)
        if insertion == .added { generation &+= 1 }
        return insertion
    }

    /// Takes `address`, an instance of machine `name`, out; nothing when it was not there.
    mutating func remove(_ address: String, of name: String) {
        if byMachine[name]?.remove(address) == true { generation &+= 1 }
    }
}
