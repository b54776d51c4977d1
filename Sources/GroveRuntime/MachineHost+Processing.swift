public import Grove
public import DequeModule

extension MachineHost {
    @usableFromInline
    func drainWhenWoken() {
        bootIfNeeded()
        drainNow()
    }

    @inlinable
    func bootIfNeeded() {
        if !booted { boot() }
    }

    /// First run: arms restored timers, runs the start effect of a machine that starts afresh
    /// (``Machine/startEffect(_:)``), and ends at once when the initial state is terminal.
    ///
    /// Inlinable for what most first runs are, a new instance with nothing restored and no
    /// start effect: a worker boots one per fresh key, and specialized for the machine type
    /// (its ``HostedPath``) that is a few checks; generic, each step looked up type metadata.
    @inlinable
    func boot() {
        if startsAfresh, isRunning, timersToRestore.isEmpty, ioToReissue.isEmpty, !M.isTerminal(_state) {
            let start = M.startEffect(_state)
            if case .none = start.kind, inline.isEmpty, inlineBuffer.isEmpty {
                booted = true
                startsAfresh = false
                return
            }
            return bootFully(startEffect: start)
        }
        bootFully(startEffect: nil)
    }

    /// ``boot()`` for a host that restores something, starts with an effect, or ends at once.
    /// - Parameter startEffect: ``Machine/startEffect(_:)`` when ``boot()`` asked for it already
    ///   (it is asked once).
    @usableFromInline
    func bootFully(startEffect: MachineEffect<M>?) {
        booted = true
        // A host stopped before it first ran arms nothing.
        // A new instance restores nothing: skipped, since in generic code each loop over an
        // empty array still looks up type metadata (a worker boots one per fresh key).
        if !timersToRestore.isEmpty {
            if !isRunning { timersToRestore = [] }
            for timer in timersToRestore {
                arm(timer.event, id: timer.id.isGenerated ? nil : timer.id, deadline: timer.deadline, parent: nil)
            }
            timersToRestore = []
        }
        if !ioToReissue.isEmpty {
            if !isRunning { ioToReissue = [] }
            reissueRestoredIO()
        }
        if startsAfresh, isRunning, !M.isTerminal(_state) {
            startsAfresh = false
            let start = startEffect ?? M.startEffect(_state)
            _ = execute(start, parent: nil)
            if !inline.isEmpty || !inlineBuffer.isEmpty { runInline() }
            if !isRunning {
                finishRun(droppedBefore: EmptyCollection())
                return
            }
        }
        if isRunning, M.isTerminal(_state) {
            lastOutput = M.initialOutput
            end(.ended(Termination(reason: .terminalState, finalState: _state, lastOutput: lastOutput, droppedEvents: [])))
            finishRun(droppedBefore: EmptyCollection())
        }
    }

    /// Processes mailbox batches until the mailbox is empty or the machine ends, or `rounds`
    /// batches were taken.
    /// - Returns: `true` when it stopped at `rounds` with work possibly left: the mailbox still
    ///   counts the host as draining, so the caller must drain it again.
    @inlinable @discardableResult
    func drainNow(rounds: Int = .max) -> Bool {
        var processed = 0
        var batch: Deque<MailItem<M>> = []
        var taken = 0
        while isRunning {
            if taken == rounds {
                mailbox.release(processed: processed)
                return true
            }
            taken += 1
            mailbox.take(processed: processed, into: &batch)
            if batch.isEmpty { return false }
            processed = 0
            // A small buffer goes back to the mailbox for its next events; a burst's big one is
            // freed, so an idle host does not keep it.
            let keep = batch.count <= 64
            // Items are moved out, not copied: no retain and release of their payloads.
            while let item = batch.popFirst() {
                if item.isExternal { processed += 1 }
                handle(item)
                if !isRunning {
                    finishRun(droppedBefore: batch)
                    return false
                }
            }
            if !keep { batch = [] }
        }
        return false
    }

    /// Handles one mailbox item and everything it causes inline. Always inlined into
    /// ``drainNow(rounds:)``'s loop: called, the item is copied and destroyed once more per event.
    @inlinable @inline(__always)
    func handle(_ item: MailItem<M>) {
        switch item {
        case .event(let event):
            apply(event, origin: .sent)
        case .delivered(let event, let key):
            guard registry.isLive(key) else {
                trace?(.resultDiscarded(key.id))
                return
            }
            apply(event, origin: .effect(key.id))
        case .eventAwaitingState(let event, let waiter):
            handleAwaiting(event, waiter)
            return
        case .eventAwaitingReply(let event, let token):
            handleAwaiting(event, token: token)
            return
        case .finished, .failed, .errored, .timerFired, .request:
            handleReport(item)
        }
        if !inline.isEmpty || !inlineBuffer.isEmpty { runInline() }
    }

    /// An event whose sender waits for the state it committed: `answer` gets that state, or
    /// why the event did not run. Inlinable, so a transport's specialized path runs it
    /// specialized (and calls its own `answer` directly); not inlined, so it does not weigh on
    /// `handle`.
    @inlinable @inline(never)
    func handleAwaiting(_ event: M.Event, _ answer: (Result<M.State, HostError>, _ unhandled: Bool) -> Void) {
        unhandledLast = false
        apply(event, origin: .sent)
        // Read before the inline events it started, which are not what the sender asked about.
        let unhandled = unhandledLast
        if !inline.isEmpty || !inlineBuffer.isEmpty { runInline() }
        if !isRunning, let outcome, case .failed(let error) = outcome {
            answer(.failure(error), false)
        } else {
            answer(.success(_state), unhandled)
        }
    }

    /// An event whose sender is answered through the host's reply handler.
    @inlinable
    func handleAwaiting(_ event: M.Event, token: UInt64) {
        let (reply, address) = (replyHandler, address)
        // The recorder notes which request carried the event (a worker's flight recorder, for
        // attributing a crash to its sender); only while it runs.
        runningToken = token
        defer { runningToken = 0 }
        handleAwaiting(event) { reply?(token, address, $0, $1) }
    }

    /// The less frequent mailbox items: work reports, timers.
    @usableFromInline
    func handleReport(_ item: MailItem<M>) {
        switch item {
        case .event, .delivered, .eventAwaitingState, .eventAwaitingReply:
            handle(item)
        case .finished(let key):
            guard let node = registry.remove(key) else { return }
            noteEnded(key.id, node.resource, .finished)
            if let parent = node.parent { childEnded(parent, key.id) }
            trace?(.workEnded(key.id))
        case .failed(let key, let error):
            guard let node = registry.remove(key) else { return }
            noteEnded(key.id, node.resource, .failed)
            report(.effectFailed(id: key.id, error: error))
            end(.failed(.effectFailed(address: address, id: key.id, error: error)))
        case .errored(let key, let error):
            guard let node = registry.remove(key) else { return }
            noteEnded(key.id, node.resource, .failed)
            report(.effectFailed(id: key.id, error: error))
            if let parent = node.parent { childEnded(parent, key.id) }
            trace?(.workFailed(key.id, error: error))
        case .timerFired(let key):
            guard let node = registry.remove(key), case .timer(_, _, let event) = node.resource else { return }
            noteEnded(key.id, node.resource, .fired)
            apply(event, origin: .timer(key.id))
            if let parent = node.parent { childEnded(parent, key.id) }
        case .request(.state(let reply)):
            reply(_state)
        case .request(.stop(let reply)):
            // `drainNow` finishes the run: what was queued after the stop is dropped and refused.
            end(.ended(Termination(reason: .stopped, finalState: _state, lastOutput: lastOutput, droppedEvents: [])))
            reply(_state)
        case .request(.cancel(let id, let done)):
            cancel(id)
            done()
        case .request(.answer(let answer)):
            answer()
        }
    }

    /// Processes inline events (and sequence bookkeeping) until none are left.
    @usableFromInline
    func runInline() {
        flushInlineBuffer()
        while isRunning, let item = inline.popFirst() {
            switch item {
            case .event(let event):
                apply(event, origin: .inline)
            case .guarded(let event, let key):
                if registry.isLive(key) { apply(event, origin: .inline) }
            case .done(let key):
                if let node = registry.remove(key), let parent = node.parent { childEnded(parent, key.id) }
            }
            flushInlineBuffer()
        }
    }

    /// Inline events produced while executing an effect go before everything already pending.
    func flushInlineBuffer() {
        guard !inlineBuffer.isEmpty else { return }
        inline.prepend(contentsOf: inlineBuffer)
        inlineBuffer.removeAll(keepingCapacity: true)
    }

    /// One transition: `update`, then commit, observe and run the effect. The common case (no
    /// effect, no observer, not terminal) stays on the inlined fast path.
    @inlinable
    func apply(_ event: M.Event, origin: EventOrigin) {
        guard let recorder else { return transition(event, origin: origin) }
        recorder.willRun(address, event, origin, runningToken)
        transition(event, origin: origin)
        recorder.didRun()
    }

    /// ``apply(_:origin:)`` without the recorder. Any event ends the event timeout, before the
    /// machine's `step` can arm a new one.
    @inlinable
    func transition(_ event: M.Event, origin: EventOrigin) {
        if eventTimeoutArmed { cancelEventTimeout() }
        if reissuesIO { return transitionKeepingCause(event, origin: origin) }
        let effect = M.step(&_state, event: event)
        if case .none = effect.kind, stateObservers.isEmpty, trace == nil, !M.isTerminal(_state) { return }
        committed(effect, event: event, origin: origin)
    }

    /// Cancels the event timeout: an event arrived. A no-op when it fired or was cancelled.
    @usableFromInline
    func cancelEventTimeout() {
        eventTimeoutArmed = false
        cancel(.eventTimeout)
    }

    @usableFromInline
    func committed(_ effect: MachineEffect<M>, event: M.Event, origin: EventOrigin) {
        if case .unhandled = effect.kind {
            unhandledLast = true
            trace?(.unhandled(event: event, origin: origin, state: _state))
            report(.unhandled(state: _state, event: event))
            return
        }
        for observer in stateObservers.values { observer.yield(_state) }
        trace?(.processed(event: event, origin: origin, state: _state))
        if M.isTerminal(_state) {
            if effect.postpones { postponed.append(event) }
            runTerminal(effect)
            end(.ended(Termination(reason: .terminalState, finalState: _state, lastOutput: lastOutput, droppedEvents: [])))
            return
        }
        if case .stateChanged(let effects, let postponing) = effect.kind {
            changedState(effects, postponing: postponing ? event : nil)
        } else if case .postpone = effect.kind {
            postponed.append(event)
        } else {
            _ = execute(effect, parent: nil)
        }
    }

    /// A transition changed the state's key (``StateScoped``): the state timeout ends, the
    /// exit, transition and enter effects run as top-level effects, in order, and the postponed
    /// events (`postponing` last, when the transition postponed it) are delivered again after
    /// their inline events and ahead of the mailbox, as `gen_statem` does.
    func changedState(_ effects: [MachineEffect<M>], postponing: M.Event?) {
        cancel(.stateTimeout)
        for effect in effects { _ = execute(effect, parent: nil) }
        if let postponing { postponed.append(postponing) }
        redeliverPostponed()
    }

    /// Queues the postponed events as inline events, oldest first, after those already produced
    /// by the running transition.
    func redeliverPostponed() {
        guard !postponed.isEmpty else { return }
        for event in postponed { inlineBuffer.append(.event(event)) }
        postponed.removeAll()
    }

    /// On the transition into a terminal state only outputs take effect: work started now could
    /// never deliver, so it is not started, and inline events are dropped.
    func runTerminal(_ effect: MachineEffect<M>) {
        var skipped = 0
        var dropped: [M.Event] = []
        func visit(_ effect: MachineEffect<M>) {
            switch effect.kind {
            case .output(let output): emit(output)
            case .events(let events): dropped += events
            case .work, .timer, .io: skipped += 1
            case .sequence(_, let effects), .merge(_, let effects), .stateChanged(let effects, _): effects.forEach(visit)
            case .none, .unhandled, .cancel, .cancelAll, .postpone: break
            }
        }
        visit(effect)
        droppedOnEnd += dropped
        if skipped > 0 { report(.effectsSkippedAtTermination(count: skipped)) }
    }

    func emit(_ output: M.Output) {
        lastOutput = output
        trace?(.output(output))
        for observer in outputObservers.values { observer.yield(output) }
    }

    /// Marks the run as over: cancels all work and closes the mailbox. `finishRun` completes it.
    func end(_ newOutcome: Outcome) {
        guard isRunning else { return }
        outcome = newOutcome
        for (id, node) in registry.removeAll() {
            EffectRegistry<M>.release(node.resource)
            noteEnded(id, node.resource, .ended)
        }
        // Postponed events came before any inline event still pending.
        droppedOnEnd = postponed + droppedOnEnd
        postponed = []
        for item in inline {
            if case .event(let event) = item { droppedOnEnd.append(event) }
            if case .guarded(let event, _) = item { droppedOnEnd.append(event) }
        }
        inline.removeAll()
        inlineBuffer.removeAll()
    }

    /// Reports dropped events, answers waiters and finishes observation streams.
    @usableFromInline
    func finishRun<C: Collection<MailItem<M>>>(droppedBefore batchRest: C) {
        guard let outcome else { return }
        let closeReason = error(for: outcome)
        var dropped = droppedOnEnd
        let taken = Array(batchRest)
        let finalState = _state
        mailbox.close(closeReason, finalState: finalState) { queued in
            dropped += Self.settle(taken + queued, finalState: finalState, error: closeReason, address: address, replyHandler: replyHandler)
        }
        droppedOnEnd = []
        if !dropped.isEmpty { report(.eventsDropped(dropped, reason: closeReason)) }
        if case .ended(var termination) = outcome {
            termination.droppedEvents = dropped
            termination.lastOutput = lastOutput
            self.outcome = .ended(termination)
        }
        let result = result(for: self.outcome!)
        if !endReported {
            endReported = true
            hooks?.onEnd?(result)
            onEndAt?(address, result)
        }
        for waiter in completionWaiters { waiter.resume(returning: result) }
        completionWaiters = []
        for observer in stateObservers.values { observer.finish() }
        for observer in outputObservers.values { observer.finish() }
        for observer in effectObservers.values { observer.finish() }
        stateObservers = [:]
        outputObservers = [:]
        effectObservers = [:]
        log.debug("machine ended", metadata: ["reason": "\(closeReason.code.rawValue)", "dropped": "\(dropped.count)"])
    }

    /// Settles what will never be processed, in order: waiting senders get `error`, requests are
    /// answered with `finalState` (a read or stop of an ended machine) or at once (a cancel).
    /// Returns the external events among `items`, oldest first.
    nonisolated static func settle(
        _ items: [MailItem<M>], finalState: M.State, error: HostError, address: String,
        replyHandler: (@Sendable (UInt64, String, Result<M.State, HostError>, Bool) -> Void)?
    ) -> [M.Event] {
        var dropped: [M.Event] = []
        for item in items {
            switch item {
            case .event(let event):
                dropped.append(event)
            case .eventAwaitingState(let event, let waiter):
                waiter(.failure(error), false)
                dropped.append(event)
            case .eventAwaitingReply(let event, let token):
                replyHandler?(token, address, .failure(error), false)
                dropped.append(event)
            case .request(let request):
                answer(request, finalState: finalState)
            case .delivered, .finished, .failed, .errored, .timerFired:
                // Reports from the machine's own work: nobody waits for them.
                break
            }
        }
        return dropped
    }

    /// Answers a request that will never get its turn: the machine has ended.
    nonisolated static func answer(_ request: HostRequest<M>, finalState: M.State) {
        switch request {
        case .state(let reply), .stop(let reply): reply(finalState)
        case .cancel(_, let done): done()
        case .answer(let answer): answer()
        }
    }

    func report(_ diagnostic: HostDiagnostic<M>) {
        switch diagnostic {
        case .unhandled:
            log.debug("unhandled event; state unchanged")
        case .effectFailed(let id, let error):
            log.error("effect failed", metadata: ["effect": "\(id)", "error": "\(error)"])
        case .eventsDropped(let events, let reason):
            log.notice("events dropped", metadata: ["count": "\(events.count)", "reason": "\(reason.code.rawValue)"])
        case .mailboxOverflow:
            log.warning("mailbox full; send refused")
        case .effectsSkippedAtTermination(let count):
            log.debug("work returned with the terminal transition was not started", metadata: ["count": "\(count)"])
        case .postponeIgnored:
            log.warning("'.postpone' ignored: it keeps the event only as the whole effect a transition returns")
        case .reissueNotKept(let id, let request):
            let text = "io request '\(request)' re-issues after a restart, but \(M.self) does not declare "
                + "startsReissuableIO, so it will be interrupted instead; add `static var startsReissuableIO: Bool { true }` to \(M.self)"
            if UndeclaredReissues.first(M.self) {
                log.warning("\(text)", metadata: ["effect": "\(id)"])
            } else {
                log.debug("\(text)", metadata: ["effect": "\(id)"])
            }
        }
        diagnostics?(diagnostic)
    }
}
