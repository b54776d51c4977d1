/// Work a transition asks the host to do, described as a value.
///
/// Effects are built with the static constructors (`.task`, `.operation`, `.stream`, `.after`,
/// `.io`, `.cancel`, `.sequence`, `.merge`, `.events`, `.output`) and composed freely. The host
/// executes them after the transition commits. Every piece of async work has an ``EffectID``:
/// starting work with an id that is in flight cancels the old work first, and cancelled work can
/// never deliver an event afterwards.
public struct MachineEffect<M: Machine>: Sendable {
    @usableFromInline package let kind: Kind

    @inlinable package init(kind: Kind) { self.kind = kind }

    @usableFromInline package enum Kind: Sendable {
        case none
        case unhandled
        case events([M.Event])
        case output(M.Output)
        case work(Work)
        case timer(id: EffectID?, delay: Duration, event: M.Event)
        case io(id: EffectID?, IOCall<M>)
        case cancel(EffectID)
        case cancelAll
        case sequence(id: EffectID?, [MachineEffect])
        case merge(id: EffectID?, [MachineEffect])
        /// Keep the event until the state's key changes (``MachineEffect/postpone``).
        case postpone
        /// What ``StateScoped/step(_:event:)`` returns when the state's key changed: the state
        /// timeout is cancelled, `effects` (the exit effect of the state left, the transition's
        /// own, the enter effect of the state entered, those that are not `.none`) run in that
        /// order as top-level effects, each as if returned alone, then the postponed events are
        /// delivered again. `postponing`: the transition's own effect was `.postpone`.
        case stateChanged([MachineEffect], postponing: Bool)
    }

    /// Async work that runs off the machine and talks back through ``Send``.
    @usableFromInline package struct Work: Sendable {
        package let id: EffectID?
        package let kind: WorkKind
        package let onError: ErrorPolicy
        package let run: @Sendable (M.Env, Send<M.Event>) async throws -> Void
    }

    @usableFromInline package enum WorkKind: String, Sendable {
        case operation, task, stream
    }

    /// What the host does when an effect throws an error that is not cancellation. A
    /// `CancellationError` thrown by work that was not cancelled counts as an error: something
    /// inside it gave up, and the machine should hear about it.
    public enum ErrorPolicy: Sendable {
        /// The default: the machine's ``Machine/failureEvent(_:)`` when it gives one, otherwise
        /// a logged `effectFailed` diagnostic; either way the machine keeps running.
        case failureEvent
        /// Turn the error into this event for the machine.
        case map(@Sendable (any Error) -> M.Event)
        /// Stop the machine and report the error: `run()` throws it and later sends fail
        /// (OTP's "let it crash", for a machine whose supervisor should restart it).
        case fail
    }
}

extension MachineEffect {
    /// `true` for `.none`, and for sequences and merges that hold nothing but `.none`.
    public var isNone: Bool {
        switch kind {
        case .none: true
        case .sequence(_, let effects), .merge(_, let effects): effects.allSatisfy(\.isNone)
        case .unhandled, .events, .output, .work, .timer, .io, .cancel, .cancelAll, .postpone, .stateChanged: false
        }
    }

    /// Whether a host keeps the event this effect was returned for: `.postpone`, alone or as the
    /// transition's own effect when the state changed. Journal replay reads it.
    package var postpones: Bool {
        switch kind {
        case .postpone: true
        case .stateChanged(_, let postponing): postponing
        case .none, .unhandled, .events, .output, .work, .timer, .io, .cancel, .cancelAll, .sequence, .merge: false
        }
    }

    /// Whether this is ``StateScoped``'s effect of a transition that changed the state's key,
    /// after which the postponed events are delivered again. Journal replay reads it.
    package var changesStateKey: Bool {
        if case .stateChanged = kind { return true }
        return false
    }

    /// `true` when the transition reported that it does not handle the event in this state.
    public var isUnhandled: Bool {
        if case .unhandled = kind { return true }
        return false
    }
}

/// The handle async work uses to send events back to its machine.
///
/// Sending fails with `CancellationError` once the work was cancelled or replaced, or its machine
/// has stopped; work should let that error end it.
public struct Send<Event: Sendable>: Sendable {
    let deliver: @Sendable (Event) throws -> Void

    /// Wraps a delivery function. Hosts and test kits create these; user code receives them.
    package init(_ deliver: @escaping @Sendable (Event) throws -> Void) { self.deliver = deliver }

    /// Sends `event` to the machine that started this work.
    /// - Throws: `CancellationError` when the work was cancelled or its machine stopped.
    public func send(_ event: Event) throws { try deliver(event) }

    /// Sends `event` to the machine that started this work: `try send(.loaded(items))`.
    public func callAsFunction(_ event: Event) throws { try deliver(event) }
}
