extension Topology {
    /// Every worker process, group by group, in declaration order.
    public var workerInstances: [WorkerInstance] {
        workers.flatMap { group in
            group.instanceNames.enumerated().map { index, name in
                WorkerInstance(name: name, group: group.name, index: index)
            }
        }
    }

    /// The instance names of the group called `group`, or `[]` when there is none.
    /// - Parameter group: A worker group name.
    @inlinable
    public func instances(of group: String) -> [String] {
        workers.first { $0.name == group }?.instanceNames ?? []
    }

    /// The machine called `name`, or `nil`.
    /// - Parameter name: A machine name, without key.
    @inlinable
    public func machine(named name: String) -> MachineSpec? {
        machines.first { $0.name == name }
    }

    /// The worker instance that hosts a machine instance.
    ///
    /// A single machine runs on the first instance of its group. A keyed machine's instance runs
    /// on the instance picked by a stable hash of the key (``stableHash(_:)``) modulo the group
    /// size, so every process and every run agrees on it.
    /// - Parameters:
    ///   - name: The machine name.
    ///   - key: The instance key for a keyed machine; `nil` for a single one.
    /// - Returns: The instance name, or `nil` when there is no such machine, its group has no
    ///   instances, or the key does not fit (missing or empty for a keyed machine, present for a
    ///   single one).
    ///
    /// `@inlinable`, as ``machine(named:)`` and ``instances(of:)``: the coordinator asks per
    /// request from another module, and only public bodies cross one by default.
    @inlinable
    public func placement(ofMachine name: String, key: String?) -> String? {
        guard let spec = machine(named: name) else { return nil }
        let candidates = instances(of: spec.worker)
        guard !candidates.isEmpty else { return nil }
        switch (spec.keyed, key) {
        case (false, nil):
            return candidates[0]
        case (true, let key?) where !key.isEmpty:
            return candidates[Int(Topology.stableHash(key) % UInt64(candidates.count))]
        default:
            return nil
        }
    }

    /// The one of `candidates` a keyed instance at `key` goes to, by the same stable hash as
    /// ``placement(ofMachine:key:)``; `nil` when there are none. Handoff places a lost worker's
    /// instances among its pool's live workers with it.
    package func placement(ofKey key: String, among candidates: [String]) -> String? {
        guard !candidates.isEmpty else { return nil }
        return candidates[Int(Topology.stableHash(key) % UInt64(candidates.count))]
    }

    /// The worker of `pool` (its group's instances in placement order) a keyed instance at `key`
    /// lives on while the workers `handedOff` are handed off: its home, unless that is handed off,
    /// then the one among the others by the same hash (the home when every one is). The
    /// coordinator routes with it (`CoordinatorCore.host(of:key:)`), a worker serving direct
    /// routes checks with it that a key is its own (docs/DIRECT-ROUTES.md 2.8). `nil` for an
    /// empty pool.
    package static func host(ofKey key: String, pool: [String], handedOff: Set<String>) -> String? {
        var key = key
        return key.withUTF8 { host(ofKeyBytes: $0, pool: pool, handedOff: handedOff) }
    }

    /// ``host(ofKey:pool:handedOff:)`` from the key's UTF-8 bytes, which a worker has at hand
    /// without making a string of them.
    package static func host(ofKeyBytes key: UnsafeBufferPointer<UInt8>, pool: [String], handedOff: Set<String>) -> String? {
        guard !pool.isEmpty else { return nil }
        let hash = stableHash(key)
        let home = pool[Int(hash % UInt64(pool.count))]
        guard handedOff.contains(home) else { return home }
        let live = pool.filter { !handedOff.contains($0) }
        return live.isEmpty ? home : live[Int(hash % UInt64(live.count))]
    }

    /// The worker group that executes io requests named `request`, or `nil` when they run on the
    /// worker of the machine that starts them.
    /// - Parameter request: An io request name, e.g. `"Authenticate"`.
    public func ioWorkerGroup(for request: String) -> String? {
        io.first { $0.request == request }?.worker
    }

    /// Why a machine instance at `address` may not start io request `request` on another group,
    /// or `nil` when it may: the request's `io[]` entry names the machines that may (when it
    /// names any), else every machine not on an external group may. A worker key handed out for
    /// an external group would otherwise start any request in its machines' names (an attacker
    /// tried passwords against `Authenticate` that way, around AuthFlow's lockout).
    public func ioRefusal(of request: String, from address: String) -> String? {
        guard let placement = io.first(where: { $0.request == request }) else { return nil }
        let name = MachineAddress.machine(of: address)
        guard let spec = machine(named: name) else { return "'\(name)' is not a machine of topology '\(self.name)'" }
        if let allowed = placement.machines {
            return allowed.contains(spec.name) ? nil
                : "machine '\(spec.name)' may not start io request '\(request)': io[] names only \(allowed.map { "'\($0)'" }.joined(separator: ", "))"
        }
        guard workers.first(where: { $0.name == spec.worker })?.external == true else { return nil }
        return "machine '\(spec.name)' is on external worker group '\(spec.worker)', whose machines start io request '\(request)' only "
            + "when its io[] entry names them (\"machines\": [\"\(spec.name)\"])"
    }

    /// How long a call of io request `request` may run before its machine hears `timeout`: its
    /// `io[]` entry's `timeoutMs`, else ``IOLimits/timeoutMs``.
    /// - Parameter request: An io request name, e.g. `"Authenticate"`.
    public func ioTimeoutMs(for request: String) -> Int {
        io.first { $0.request == request }?.timeoutMs ?? ioLimits.timeoutMs
    }

    /// FNV-1a, 64 bits, over the UTF-8 of `key`, then MurmurHash3's 64-bit finalizer (fmix64):
    /// the same in every process and every run, unlike `Hasher`, which is seeded per process.
    ///
    /// FNV-1a alone is a poor placement hash: its low k bits depend only on the low k bits of
    /// each byte, so in a group of 2, 4, 8 or 16 instances keys whose bytes differ only above
    /// those bits ("a" and "q", "user-1" and "user-3" with 2) always shared an instance. The
    /// finalizer makes every bit of the result depend on every bit of the key.
    @usableFromInline
    static func stableHash(_ key: String) -> UInt64 {
        var key = key
        return key.withUTF8 { stableHash($0) }
    }

    /// The index, in a pool of `poolSize` workers, of the one hosting the keyed instance at
    /// `address`, whose key follows the `/` at `slash`: what ``placement(ofMachine:key:)`` picks,
    /// without making the key a string of its own.
    package static func poolIndex(ofKeyIn address: String, after slash: String.Index, poolSize: Int) -> Int {
        let keyStart = address.utf8.index(after: slash)
        let hash = address.utf8[keyStart...].withContiguousStorageIfAvailable { stableHash($0) }
            ?? stableHash(String(address[keyStart...]))
        return Int(hash % UInt64(poolSize))
    }

    /// ``stableHash(_:)-(String)`` of a key's UTF-8 bytes.
    @usableFromInline
    static func stableHash(_ key: UnsafeBufferPointer<UInt8>) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in key {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01b3
        }
        hash ^= hash >> 33
        hash &*= 0xff51_afd7_ed55_8ccd
        hash ^= hash >> 33
        hash &*= 0xc4ce_b9fe_1a85_ec53
        hash ^= hash >> 33
        return hash
    }
}
