public import Grove
import Synchronization

/// What a host keeps of an io request in flight, for its snapshots.
@usableFromInline
struct IOFlight<M: Machine>: Sendable {
    /// The request's name (``IORequest/name``), for a watcher of the machine's effects.
    let name: String
    /// The event its machine hears when restored without it: the interrupted failure, mapped.
    let interrupted: @Sendable () -> M.Event
    /// For a request that is re-issued once restored, the transition that started it.
    let cause: IOCause<M>?
}

/// The transition that started a re-issuable io request: running it again gives the request and
/// its result mapping, which is code and cannot be stored.
struct IOCause<M: Machine>: Sendable {
    let name: String
    let state: M.State
    let event: M.Event
    /// Which of the transition's re-issuable requests (``MachineEffect/reissuableIO(at:)``).
    let ordinal: Int
}

/// The transition a host with ``HostOptions/reissuesIO`` is committing: the state it began
/// from, its event, and how many re-issuable requests its effect started so far.
@usableFromInline
struct RunningTransition<M: Machine>: Sendable {
    let state: M.State
    let event: M.Event
    var reissued = 0
}

/// A re-issued request of a restored snapshot, made again, waiting for the host's first run.
@usableFromInline
struct PendingReissue<M: Machine>: Sendable {
    let record: Snapshot<M>.ReissuedIO
    let call: IOCall<M>
}

extension MachineHost {
    /// ``transition(_:origin:)`` for a host that keeps, for each re-issuable io request the
    /// effect starts, the state before the transition and its event. The copy of the state
    /// is what this costs per event: a state whose collections `update` changes is copied then.
    @usableFromInline
    func transitionKeepingCause(_ event: M.Event, origin: EventOrigin) {
        let before = _state
        let effect = M.step(&_state, event: event)
        if case .none = effect.kind, stateObservers.isEmpty, trace == nil, !M.isTerminal(_state) { return }
        running = RunningTransition(state: before, event: event)
        committed(effect, event: event, origin: origin)
        running = nil
    }

    /// What a snapshot carries of `call`, started now under `parent` with `id`: its cause when
    /// its type re-issues, the host keeps causes, and a snapshot carries it on its own.
    func flight(of call: IOCall<M>, id: EffectID, under parent: JobKey?) -> IOFlight<M> {
        guard call.onInterruption == .reissue, registry.restoresOnItsOwn(under: parent) else {
            return IOFlight(name: call.requestName, interrupted: call.interrupted, cause: nil)
        }
        guard let transition = running else {
            if reissueRequested { report(.reissueNotKept(id: id, request: call.requestName)) }
            return IOFlight(name: call.requestName, interrupted: call.interrupted, cause: nil)
        }
        running?.reissued += 1
        return IOFlight(name: call.requestName, interrupted: call.interrupted, cause: IOCause(
            name: call.requestName, state: transition.state, event: transition.event, ordinal: transition.reissued))
    }

    /// The requests of `reissued` made again by running the transitions that started them;
    /// those the transition no longer gives (the machine's `update` changed) become the events
    /// their interrupted failures map to.
    nonisolated static func rederive(_ reissued: [Snapshot<M>.ReissuedIO]) -> (calls: [PendingReissue<M>], interrupted: [M.Event]) {
        var calls: [PendingReissue<M>] = []
        var interrupted: [M.Event] = []
        for record in reissued {
            var state = record.stateBefore
            let effect = M.step(&state, event: record.event)
            if let call = effect.reissuableIO(at: record.ordinal), call.requestName == record.name {
                calls.append(PendingReissue(record: record, call: call))
            } else {
                interrupted.append(record.interrupted)
            }
        }
        return (calls, interrupted)
    }

    /// Sends the restored snapshot's re-issued requests again, under their ids, at the first run.
    func reissueRestoredIO() {
        let pending = ioToReissue
        ioToReissue = []
        for item in pending {
            let record = item.record
            let key = newKey(record.id.isGenerated ? nil : record.id)
            let task = Self.spawn(item.call, key: key, performer: io, mailbox: mailbox, on: ioExecutor)
            let cause = IOCause<M>(name: record.name, state: record.stateBefore, event: record.event, ordinal: record.ordinal)
            register(key, parent: nil, .io(task, IOFlight(name: item.call.requestName, interrupted: item.call.interrupted, cause: cause)))
        }
    }
}

extension MachineEffect {
    /// The `ordinal`-th re-issuable io request (0 for the first) among those a snapshot carries
    /// on their own: top-level, or inside anonymous merges, in order. The same count as
    /// ``MachineHost/flight(of:id:under:)`` makes while the effect starts.
    func reissuableIO(at ordinal: Int) -> IOCall<M>? {
        var remaining = ordinal
        func find(_ effect: MachineEffect<M>) -> IOCall<M>? {
            switch effect.kind {
            case .io(_, let call):
                guard call.onInterruption == .reissue else { return nil }
                if remaining == 0 { return call }
                remaining -= 1
                return nil
            case .merge(let id, let children):
                guard id == nil else { return nil }
                for child in children {
                    if let found = find(child) { return found }
                }
                return nil
            case .stateChanged(let children, _):
                // Run as top-level effects, so a snapshot carries their requests on their own.
                for child in children {
                    if let found = find(child) { return found }
                }
                return nil
            case .none, .unhandled, .events, .output, .work, .timer, .cancel, .cancelAll, .sequence, .postpone:
                return nil
            }
        }
        return find(self)
    }
}

/// The machine types whose undeclared re-issuable requests were logged at warning level: once
/// per type, not once per instance of it.
enum UndeclaredReissues {
    private static let warned = Mutex<Set<ObjectIdentifier>>([])

    /// `true` the first time it is asked about `machine`.
    static func first<M: Machine>(_ machine: M.Type) -> Bool {
        warned.withLock { $0.insert(ObjectIdentifier(machine)).inserted }
    }
}
