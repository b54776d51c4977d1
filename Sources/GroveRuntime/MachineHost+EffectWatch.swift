package import Grove

/// A start or end of work in flight on a host: what ``MachineHost/effects()`` tells a watcher
/// (a worker publishing `effect:<address>` for the live view).
@usableFromInline
package struct EffectChange: Sendable, Equatable {
    /// What the work is. Sequences and merges are not told: the work inside them is.
    package enum Kind: String, Sendable, Equatable {
        case timer, operation, task, stream, io
    }

    package enum Phase: String, Sendable, Equatable {
        case started
        /// A timer's deadline came; its event is handled next.
        case fired
        /// An operation, task, stream or io call ended on its own (its result delivered).
        case finished
        /// It threw, under `.failureEvent` (the machine heard of it) or `.fail` (the machine ends).
        case failed
        /// `.cancel(id)`, `.cancelAll`, an admin's cancel, a state or event timeout's end, or a
        /// sequence or merge above it cancelled.
        case cancelled
        /// New work took its id.
        case replaced
        /// Its machine ended (terminal state, stop, failure).
        case ended
        /// Its instance left memory; a timer comes back, from its record, when the instance does.
        case passivated
    }

    package var id: EffectID
    package var kind: Kind
    package var phase: Phase
    /// A timer's deadline.
    package var deadline: Timestamp?
    /// An io call's request name.
    package var request: String?

    package init(id: EffectID, kind: Kind, phase: Phase, deadline: Timestamp? = nil, request: String? = nil) {
        self.id = id
        self.kind = kind
        self.phase = phase
        self.deadline = deadline
        self.request = request
    }
}

extension EffectRegistry.Resource {
    /// The change a watcher is told of, for work that is told (nil: a group or inline events).
    func change(_ id: EffectID, _ phase: EffectChange.Phase) -> EffectChange? {
        switch self {
        case .timer(_, let deadline, _): EffectChange(id: id, kind: .timer, phase: phase, deadline: deadline)
        case .task(_, let kind):
            switch kind {
            case .operation: EffectChange(id: id, kind: .operation, phase: phase)
            case .task: EffectChange(id: id, kind: .task, phase: phase)
            case .stream: EffectChange(id: id, kind: .stream, phase: phase)
            }
        case .io(_, let flight): EffectChange(id: id, kind: .io, phase: phase, request: flight.name)
        case .group, .inline: nil
        }
    }
}

extension MachineHost {
    /// The work in flight now, each as `started`, followed by every start and end of work from
    /// now on; finishes when the machine ends or leaves memory. Watching costs the host a
    /// change per start and end; not watching, an emptiness check.
    package func effects() -> AsyncStream<EffectChange> {
        let (stream, continuation) = AsyncStream.makeStream(of: EffectChange.self)
        let inFlight = registry.nodes.compactMap { $0.value.resource.change($0.key, .started) }
        for change in inFlight.sorted(by: { $0.id.description < $1.id.description }) { continuation.yield(change) }
        guard isRunning else {
            continuation.finish()
            return stream
        }
        let id = nextObserverID
        nextObserverID += 1
        effectObservers[id] = continuation
        continuation.onTermination = { [weak self] _ in
            guard let host = self else { return }
            Task { await host.removeEffectObserver(id) }
        }
        return stream
    }

    func removeEffectObserver(_ id: Int) { effectObservers[id] = nil }

    /// Registers work and tells its watchers it started (and, when it displaced work a
    /// cancel had just started under the same id, that that was replaced).
    func register(_ key: JobKey, parent: JobKey?, _ resource: EffectRegistry<M>.Resource) {
        let displaced = registry.insert(key, parent: parent, resource)
        guard !effectObservers.isEmpty else { return }
        if let displaced { noteEnded(key.id, displaced, .replaced) }
        tell(resource.change(key.id, .started))
    }

    /// Tells the watchers that the work under `id` ended as `phase`.
    func noteEnded(_ id: EffectID, _ resource: EffectRegistry<M>.Resource, _ phase: EffectChange.Phase) {
        guard !effectObservers.isEmpty else { return }
        tell(resource.change(id, phase))
    }

    private func tell(_ change: EffectChange?) {
        guard let change else { return }
        for observer in effectObservers.values { observer.yield(change) }
    }
}
