import Grove

extension MachineHost {
    /// Starts `effect`. Returns the key of the registered work when something is now in flight
    /// under `parent`, or `nil` when the effect completed immediately.
    func execute(_ effect: MachineEffect<M>, parent: JobKey?) -> JobKey? {
        switch effect.kind {
        case .none, .unhandled:
            return nil
        case .events(let events):
            guard !events.isEmpty else { return nil }
            guard let parent else {
                for event in events { inlineBuffer.append(.event(event)) }
                return nil
            }
            // Inside a sequence or merge: the step ends once its events were processed.
            let key = registry.makeKey(nil)
            registry.insert(key, parent: parent, .inline)
            for event in events { inlineBuffer.append(.guarded(event, key)) }
            inlineBuffer.append(.done(key))
            return key
        case .output(let output):
            emit(output)
            return nil
        case .cancel(let id):
            cancel(id)
            return nil
        case .cancelAll:
            // Everything in flight but the merges and sequences it is part of: what comes after
            // it in them still starts (`.merge([.cancelAll, .stateTimeout(...)])` arms it).
            cancelAll(keepingAncestorsOf: parent)
            return nil
        case .work(let work):
            let key = newKey(work.id)
            let task = Self.spawn(work, key: key, env: env, mailbox: mailbox)
            register(key, parent: parent, .task(task, work.kind))
            return key
        case .timer(let id, let delay, let event):
            return arm(event, id: id, deadline: clock.now() + delay, parent: parent)
        case .io(let id, let call):
            let key = newKey(id)
            let task = Self.spawn(call, key: key, performer: io, mailbox: mailbox, on: ioExecutor)
            register(key, parent: parent, .io(task, flight(of: call, id: key.id, under: parent)))
            return key
        case .sequence(let id, let effects):
            let key = newKey(id)
            registry.insert(key, parent: parent, .group(.init(isSequence: true, remaining: effects[...])))
            advance(key)
            return registry.isLive(key) ? key : nil
        case .postpone:
            // Not the whole effect of a transition (committed handles that): nothing to keep.
            report(.postponeIgnored)
            return nil
        case .stateChanged(let effects, let postponing):
            // Only StateScoped.step makes it, as a transition's whole effect (committed); a
            // machine that nests another's step runs it here, under `parent`, as a merge.
            cancel(.stateTimeout)
            if postponing { report(.postponeIgnored) }
            redeliverPostponed()
            return execute(.merge(effects), parent: parent)
        case .merge(let id, let effects):
            let key = newKey(id)
            registry.insert(key, parent: parent, .group(.init(isSequence: false, remaining: [], isStarting: true)))
            for child in effects {
                guard registry.isLive(key) else { break }
                if let childKey = execute(child, parent: key) {
                    _ = registry.updateGroup(key) { $0.active.insert(childKey.id) }
                }
            }
            _ = registry.updateGroup(key) { $0.isStarting = false }
            advance(key)
            return registry.isLive(key) ? key : nil
        }
    }

    /// A key for new work; work already in flight under the same id is cancelled first (replace).
    func newKey(_ id: EffectID?) -> JobKey {
        if let id { cancel(id, as: .replaced) }
        return registry.makeKey(id)
    }

    @discardableResult
    func arm(_ event: M.Event, id: EffectID?, deadline: Timestamp, parent: JobKey?) -> JobKey {
        let key = newKey(id)
        if id == .eventTimeout { eventTimeoutArmed = true }
        let mailbox = self.mailbox
        let timer = clock.schedule(at: deadline) { try? mailbox.post(.timerFired(key)) }
        register(key, parent: parent, .timer(timer, deadline: deadline, event: event))
        return key
    }

    /// Cancels the work registered under `id` and everything it started. A no-op for unknown or
    /// finished ids. `phase`: what its watchers are told (`replaced` when new work takes the id).
    func cancel(_ id: EffectID, as phase: EffectChange.Phase = .cancelled) {
        guard let (key, node) = registry.remove(id: id) else { return }
        EffectRegistry<M>.release(node.resource)
        noteEnded(id, node.resource, phase)
        if case .group(let group) = node.resource {
            for child in group.active { cancelChild(child, of: key) }
        }
        if let parent = node.parent { childEnded(parent, id) }
    }

    private func cancelChild(_ id: EffectID, of parent: JobKey) {
        guard let node = registry.nodes[id], node.parent == parent else { return }
        cancel(id)
    }

    func cancelAll(keepingAncestorsOf parent: JobKey? = nil) {
        for (id, node) in registry.removeAll(keepingAncestorsOf: parent) {
            EffectRegistry<M>.release(node.resource)
            noteEnded(id, node.resource, .cancelled)
        }
    }

    /// A child of a sequence or merge ended (finished or was cancelled).
    func childEnded(_ parent: JobKey, _ child: EffectID) {
        guard let group = registry.updateGroup(parent, { $0.active.remove(child) }) else { return }
        if group.active.isEmpty { advance(parent) }
    }

    /// Starts the next sequence step, or completes the group when nothing is left.
    func advance(_ key: JobKey) {
        while let node = registry.node(key), case .group(let group) = node.resource,
              group.active.isEmpty, !group.isStarting {
            if group.isSequence, let step = group.remaining.first {
                _ = registry.updateGroup(key) { $0.remaining.removeFirst() }
                if let childKey = execute(step, parent: key) {
                    _ = registry.updateGroup(key) { $0.active.insert(childKey.id) }
                }
                continue
            }
            _ = registry.remove(key)
            if let parent = node.parent { childEnded(parent, key.id) }
            return
        }
    }

    /// Runs work off the actor. The task never touches the host: it reports through the mailbox,
    /// so a released host can deinit and cancel it.
    nonisolated static func spawn(
        _ work: MachineEffect<M>.Work, key: JobKey, env: M.Env, mailbox: Mailbox<M>
    ) -> Task<Void, Never> {
        Task {
            let send = Send<M.Event> { event in
                if Task.isCancelled { throw CancellationError() }
                try mailbox.post(.delivered(event, key))
            }
            do {
                try await work.run(env, send)
                try? mailbox.post(.finished(key))
            } catch {
                if Task.isCancelled { return }
                switch work.onError {
                case .failureEvent:
                    if let event = M.failureEvent(EffectFailure(id: key.id, error: error)) {
                        try? mailbox.post(.delivered(event, key))
                        try? mailbox.post(.finished(key))
                    } else {
                        try? mailbox.post(.errored(key, error))
                    }
                case .map(let transform):
                    try? mailbox.post(.delivered(transform(error), key))
                    try? mailbox.post(.finished(key))
                case .fail:
                    try? mailbox.post(.failed(key, error))
                }
            }
        }
    }

    nonisolated static func spawn(
        _ call: IOCall<M>, key: JobKey, performer: any IOPerformer, mailbox: Mailbox<M>, on executor: (any TaskExecutor)?
    ) -> Task<Void, Never> {
        // No preference (nil): a task as any other.
        Task(executorPreference: executor) {
            // Cancelled before it started (a reload right after a load): never send the request.
            if Task.isCancelled { return }
            let event = await call.run(performer, key.id)
            if Task.isCancelled { return }
            try? mailbox.post(.delivered(event, key))
            try? mailbox.post(.finished(key))
        }
    }
}
