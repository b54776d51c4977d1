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
    public func instances(of group: String) -> [String] {
        workers.first { $0.name == group }?.instanceNames ?? []
    }

    /// The machine called `name`, or `nil`.
    /// - Parameter name: A machine name, without key.
    public func machine(named name: String) -> MachineSpec? {
        machines.first { $0.name == name }
    }

    /// The worker instance that hosts a machine instance.
    ///
    /// A single machine runs on the first instance of its group. A keyed machine's instance runs
    /// on the instance picked by a stable hash of the key (FNV-1a, 64 bits, over its UTF-8)
    /// modulo the group size, so every process and every run agrees on it.
    /// - Parameters:
    ///   - name: The machine name.
    ///   - key: The instance key for a keyed machine; `nil` for a single one.
    /// - Returns: The instance name, or `nil` when there is no such machine, its group has no
    ///   instances, or the key does not fit (missing or empty for a keyed machine, present for a
    ///   single one).
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

    /// The worker group that executes io requests named `request`, or `nil` when they run on the
    /// worker of the machine that starts them.
    /// - Parameter request: An io request name, e.g. `"Authenticate"`.
    public func ioWorkerGroup(for request: String) -> String? {
        io.first { $0.request == request }?.worker
    }

    /// FNV-1a, 64 bits, over the UTF-8 of `key`: the same in every process and every run, unlike
    /// `Hasher`, which is seeded per process.
    static func stableHash(_ key: String) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in key.utf8 {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01b3
        }
        return hash
    }
}
