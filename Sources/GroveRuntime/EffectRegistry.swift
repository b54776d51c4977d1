public import Grove

/// The work in flight for one machine instance, keyed by effect id.
///
/// Every start of work gets a fresh generation token. Reports from work carry the key (id + token)
/// they were started with, and the host acts on a report only while that exact key is live here:
/// that is what makes cancelled or replaced work unable to deliver, even if it ignores
/// cancellation.
@usableFromInline
struct EffectRegistry<M: Machine>: Sendable {
    @usableFromInline
    enum Resource: Sendable {
        /// An operation, task or stream (``MachineEffect/WorkKind``: what a watcher is told).
        case task(Task<Void, Never>, MachineEffect<M>.WorkKind)
        /// An io request in flight, with what a snapshot carries of it.
        case io(Task<Void, Never>, IOFlight<M>)
        case timer(any ScheduledTimer, deadline: Timestamp, event: M.Event)
        case group(Group)
        /// Events of a sequence step, pending in the inline queue.
        case inline
    }

    @usableFromInline
    struct Group: Sendable {
        var isSequence: Bool
        var remaining: ArraySlice<MachineEffect<M>>
        var active: Set<EffectID> = []
        /// A merge is starting its children: a child ending now (one replaced or cancelled by a
        /// later sibling) must not complete the merge before the rest have started.
        var isStarting = false
    }

    @usableFromInline
    struct Node: Sendable {
        @usableFromInline let token: UInt64
        let parent: JobKey?
        var resource: Resource
    }

    @usableFromInline private(set) var nodes: [EffectID: Node] = [:]
    @usableFromInline var lastToken: UInt64 = 0
    @usableFromInline var lastGenerated: UInt64 = 0

    /// Inlinable, as its fields are usable from inline code: a host made specialized for its
    /// machine type (a worker's per fresh key) makes its registry without generic code.
    @inlinable init() {}

    @inlinable var isEmpty: Bool { nodes.isEmpty }

    /// A key for new work: the given id (or a generated one) with a fresh token.
    mutating func makeKey(_ id: EffectID?) -> JobKey {
        lastToken &+= 1
        if let id { return JobKey(id: id, token: lastToken) }
        lastGenerated &+= 1
        return JobKey(id: .generated(lastGenerated), token: lastToken)
    }

    @inlinable
    func isLive(_ key: JobKey) -> Bool { nodes[key.id]?.token == key.token }

    func node(_ key: JobKey) -> Node? {
        guard let node = nodes[key.id], node.token == key.token else { return nil }
        return node
    }

    /// Registers work. The caller has already cancelled what was registered under the same id;
    /// should cancelling it have started new work under that id (a sequence moving on to a step
    /// with the same id), that work is released here so nothing is left running unowned, and
    /// returned so that its end can be told.
    @discardableResult
    mutating func insert(_ key: JobKey, parent: JobKey?, _ resource: Resource) -> Resource? {
        let displaced = nodes[key.id]
        if let displaced { Self.release(displaced.resource) }
        nodes[key.id] = Node(token: key.token, parent: parent, resource: resource)
        return displaced?.resource
    }

    /// Removes the node only if `key` is the live generation, so the late finish of replaced
    /// work never removes its successor.
    mutating func remove(_ key: JobKey) -> Node? {
        guard isLive(key) else { return nil }
        return nodes.removeValue(forKey: key.id)
    }

    /// Removes whatever generation is registered under `id`.
    mutating func remove(id: EffectID) -> (JobKey, Node)? {
        guard let node = nodes.removeValue(forKey: id) else { return nil }
        return (JobKey(id: id, token: node.token), node)
    }

    mutating func updateGroup(_ key: JobKey, _ change: (inout Group) -> Void) -> Group? {
        guard var node = node(key), case .group(var group) = node.resource else { return nil }
        change(&group)
        node.resource = .group(group)
        nodes[key.id] = node
        return group
    }

    /// Timers a snapshot can carry: top-level ones, and those inside merges nobody can cancel
    /// by id (anonymous merges), which restore as top-level timers with the same behaviour. A
    /// timer that is a sequence step, or inside a named merge, is not carried: restored on its
    /// own it would outlive the steps after it or escape `.cancel(mergeID)`.
    var pendingTimers: [(id: EffectID, deadline: Timestamp, event: M.Event)] {
        nodes.compactMap { id, node in
            guard case .timer(_, let deadline, let event) = node.resource, restoresOnItsOwn(node) else { return nil }
            return (id, deadline, event)
        }.sorted { $0.deadline < $1.deadline }
    }

    /// io requests in flight that a snapshot carries as the event their machine hears when
    /// restored (an ``IOFailure/Code/interrupted`` failure): top-level ones and those inside
    /// anonymous merges, as for timers, unless they are re-issued (``reissuedIO``).
    var interruptedIO: [(id: EffectID, event: M.Event)] {
        nodes.compactMap { id, node in
            guard case .io(_, let flight) = node.resource, flight.cause == nil, restoresOnItsOwn(node) else { return nil }
            return (id, flight.interrupted())
        }.sorted { $0.id.description < $1.id.description }
    }

    /// io requests in flight that a snapshot carries to be sent again once restored: those of
    /// ``interruptedIO``'s kind whose host kept the transition that started them.
    var reissuedIO: [Snapshot<M>.ReissuedIO] {
        nodes.compactMap { id, node in
            guard case .io(_, let flight) = node.resource, let cause = flight.cause, restoresOnItsOwn(node) else { return nil }
            return Snapshot<M>.ReissuedIO(id: id, name: cause.name, stateBefore: cause.state, event: cause.event,
                                          ordinal: cause.ordinal, interrupted: flight.interrupted())
        }.sorted { $0.id.description < $1.id.description }
    }

    /// Work a snapshot cannot carry: tasks and streams in flight, and timers and io that are
    /// not in ``pendingTimers`` or ``interruptedIO``.
    var unsnapshottable: [EffectID] {
        nodes.compactMap { id, node in
            switch node.resource {
            case .task: id
            case .timer, .io: restoresOnItsOwn(node) ? nil : id
            case .group, .inline: nil
            }
        }.sorted { $0.description < $1.description }
    }

    private func restoresOnItsOwn(_ node: Node) -> Bool {
        restoresOnItsOwn(under: node.parent)
    }

    /// Whether work started under `parent` (nil: top level) is carried by a snapshot on its own:
    /// no sequence and no named merge above it.
    func restoresOnItsOwn(under parent: JobKey?) -> Bool {
        var parentKey = parent
        while let key = parentKey, let parent = self.node(key) {
            guard case .group(let group) = parent.resource, !group.isSequence, key.id.isGenerated else { return false }
            parentKey = parent.parent
        }
        return true
    }

    /// Removes everything but the groups `key` belongs to (itself and those above it, which go
    /// on with their later steps and siblings, now with no child active), returning the nodes
    /// so their resources can be released. `key` nil: removes everything.
    mutating func removeAll(keepingAncestorsOf key: JobKey?) -> [(id: EffectID, node: Node)] {
        var kept: [EffectID: Node] = [:]
        var next = key
        while let current = next, var node = node(current) {
            if case .group(var group) = node.resource {
                group.active = []
                node.resource = .group(group)
            }
            kept[current.id] = node
            next = node.parent
        }
        guard !kept.isEmpty else { return removeAll() }
        let removed = nodes.filter { kept[$0.key] == nil }.map { (id: $0.key, node: $0.value) }
        nodes = kept
        return removed
    }

    /// Removes everything, returning the nodes so their resources can be released.
    mutating func removeAll() -> [(id: EffectID, node: Node)] {
        defer { nodes.removeAll() }
        return nodes.map { (id: $0.key, node: $0.value) }
    }

    static func release(_ resource: Resource) {
        switch resource {
        case .task(let task, _), .io(let task, _): task.cancel()
        case .timer(let timer, _, _): timer.cancel()
        case .group, .inline: break
        }
    }
}
