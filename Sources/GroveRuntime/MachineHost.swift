public import Grove
public import Logging
public import DequeModule

/// The logger of hosts created without one; made on first use, after the program bootstrapped
/// its logging system.
@usableFromInline let sharedHostLogger = Logger(label: "grove.host")

/// Runs one instance of a machine: a mailbox, an effect registry and observation, in an actor.
///
/// Events are processed one at a time in FIFO order. `update` runs on the actor; effects run as
/// tasks off it and report back through the mailbox.
///
/// ```swift
/// let host = MachineHost(DataLoader.self, env: .live, io: handlers)
/// host.start()
/// try host.send(.load)                       // fire and forget
/// let state = try await host.sendAndWait(.reload)   // the state this event committed
/// for await state in await host.states() { print(state) }
/// ```
public final actor MachineHost<M: Machine> {
    // The stored properties the per-event path touches come first, in declaration order, which
    // is the object's layout: handling an event on a worker with many hosts finds each host cold
    // in the cache, and these then share a few cache lines instead of being spread over the
    // object (logger and clock sit between them otherwise).
    //
    // They are `@exclusivity(unchecked)`: the runtime's per-access bookkeeping (a thread-local
    // access set on every read-modify-write) cost time on every event. What keeps them safe is
    // that nothing re-enters the host while one of them is being modified: `update` is a pure
    // function that cannot reach the host, and the closures that run inside a modification (the
    // registry's group updates) touch only their argument; observers, diagnostics and replies
    // run outside any. Such an overlap would no longer trap: code added inside a modification
    // must keep to that.

    // The fixed-size ones first, then the state, whose size depends on the machine: a large
    // state does not push the others apart. (How the machine ended is in ``seldom``, a box.)
    @usableFromInline @exclusivity(unchecked) var booted = false
    /// Whether ``passivate()`` closed the mailbox as the host's release would: its deinit,
    /// generic code, then skips that part (a worker releases a host per key it passivates).
    @usableFromInline @exclusivity(unchecked) var closedForRelease = false
    @usableFromInline @exclusivity(unchecked) var inline: Deque<InlineItem> = []
    @usableFromInline @exclusivity(unchecked) var inlineBuffer: [InlineItem] = []
    @usableFromInline let mailbox: Mailbox<M>
    /// ``HostOptions/replyHandler``, next to the rest of the per-event path.
    @usableFromInline let replyHandler: (@Sendable (UInt64, String, Result<M.State, HostError>, Bool) -> Void)?
    @usableFromInline let trace: (@Sendable (HostTrace<M>) -> Void)?
    /// ``HostOptions/recorder``, next to the rest of the per-event path.
    @usableFromInline let recorder: RunRecorder<M>?
    /// The reply token of the queued event being handled, whose sender waits
    /// (``handleAwaiting(_:token:)``), for the recorder; 0 otherwise.
    @usableFromInline @exclusivity(unchecked) var runningToken: UInt64 = 0
    /// Whether the last transition's `update` returned `.unhandled`: set by it, cleared before
    /// an event whose sender waits (``handleAwaiting(_:_:)``), which is told.
    @usableFromInline @exclusivity(unchecked) var unhandledLast = false
    /// Whether an event timeout (``EffectID/eventTimeout``) may be armed: set when one is, so
    /// that the next event cancels it, and a machine that never arms one pays only this check.
    @usableFromInline @exclusivity(unchecked) var eventTimeoutArmed = false
    /// Whether each transition keeps the state it began from: ``HostOptions/reissuesIO``, for a
    /// machine type that declares ``Machine/startsReissuableIO``.
    @usableFromInline let reissuesIO: Bool
    @usableFromInline @exclusivity(unchecked) var stateObservers: [Int: AsyncStream<M.State>.Continuation] = [:]
    /// The machine address used in errors and logs.
    public nonisolated let address: String
    /// The current state.
    @usableFromInline @exclusivity(unchecked)
    var _state: M.State
    /// How the machine ended, its last output and the transition being committed: what most
    /// hosts never set, in one box made when first set (``Seldom``).
    @usableFromInline @exclusivity(unchecked) var seldom: Seldom?
    /// How the machine ended; nil while it runs.
    @inlinable var outcome: Outcome? {
        get { seldom?.outcome }
        set { seldomFields.outcome = newValue }
    }

    /// No ``outcome`` yet: one pointer compare for a host that never set a seldom field,
    /// where `outcome == nil` copies the optional (and its error's strings) out of the box.
    @inlinable var isRunning: Bool {
        guard let seldom else { return true }
        return seldom.outcome == nil
    }

    @usableFromInline @exclusivity(unchecked) var registry = EffectRegistry<M>()
    @usableFromInline let env: M.Env
    @usableFromInline let clock: any HostClock
    @usableFromInline let io: any IOPerformer
    /// ``HostOptions/onEndAt`` and ``HostOptions/drainScheduler``, which a worker sets for every
    /// host; the rest of the options a host reads after it is made sit in ``hooks``. Not the
    /// options whole: a worker keeps a host per live instance, and they were some 200 bytes of
    /// it, most of them copies of fields above or nil.
    @usableFromInline let onEndAt: (@Sendable (String, Result<Termination<M>, HostError>) -> Void)?
    @usableFromInline let drainScheduler: (@Sendable () -> Void)?
    /// ``HostOptions/reissuesIO`` as given (``reissuesIO`` is it for a machine type that
    /// re-issues io).
    @usableFromInline let reissueRequested: Bool
    /// ``HostOptions/onEnd``, ``HostOptions/diagnostics`` and ``HostOptions/ioExecutor``, in
    /// one box when any is set; nil for a worker's hosts, which set none.
    @usableFromInline let hooks: Hooks?
    @usableFromInline let baseLog: Logger
    /// The logger with this host's address as `machine` metadata.
    nonisolated var log: Logger {
        var log = baseLog
        log[metadataKey: "machine"] = "\(address)"
        return log
    }
    /// What isolates the host when ``HostOptions/executor`` is `nil`: an actor of its own, whose
    /// executor the host shares (a host with an executor option cannot be a default actor).
    @usableFromInline let ownIsolation: HostIsolation?
    @usableFromInline nonisolated let executorReference: UnownedSerialExecutor

    /// ``HostOptions/executor``, else the executor of an actor of the host's own.
    public nonisolated var unownedExecutor: UnownedSerialExecutor { executorReference }

    /// The current state.
    public var state: M.State { _state }

    var droppedOnEnd: [M.Event] = []
    var endReported = false
    var lastOutput: M.Output? {
        get { seldom?.lastOutput }
        set {
            if seldom == nil, newValue == nil { return }
            seldomFields.lastOutput = newValue
        }
    }
    @usableFromInline var timersToRestore: [Snapshot<M>.PendingTimer] = []
    /// Events the machine postponed (``MachineEffect/postpone``), oldest first: delivered again
    /// when the state's key next changes.
    @usableFromInline var postponed: [M.Event] = []
    /// Whether the first run is the machine's start (``Machine/startEffect(_:)`` runs), not a
    /// restore from a snapshot.
    @usableFromInline var startsAfresh = true
    /// Re-issued io of the snapshot this host was restored from, sent at its first run.
    @usableFromInline var ioToReissue: [PendingReissue<M>] = []
    /// The transition being committed, while ``reissuesIO``: the cause of the io it starts.
    var running: RunningTransition<M>? {
        get { seldom?.running }
        set {
            if seldom == nil, newValue == nil { return }
            seldomFields.running = newValue
        }
    }
    @usableFromInline var outputObservers: [Int: AsyncStream<M.Output>.Continuation] = [:]
    /// Watchers of the work in flight (``effects()``): told of each start and end while any is
    /// here, so a host nobody watches pays one emptiness check where work starts or ends.
    @usableFromInline var effectObservers: [Int: AsyncStream<EffectChange>.Continuation] = [:]
    var nextObserverID = 0
    var completionWaiters: [CheckedContinuation<Result<Termination<M>, HostError>, Never>] = []

    @usableFromInline
    enum InlineItem {
        case event(M.Event)
        case guarded(M.Event, JobKey)
        case done(JobKey)
    }

    /// The fields of a host that most hosts never set, boxed: a worker releases a host per
    /// key it passivates, and the host's deinit is generic code, which looks up the metadata of
    /// each field whose type depends on the machine to destroy it (two lookups per optional
    /// one). One reference to a box, nil for most, costs none.
    @usableFromInline
    final class Seldom {
        @usableFromInline @exclusivity(unchecked) var outcome: Outcome?
        @exclusivity(unchecked) var lastOutput: M.Output?
        @exclusivity(unchecked) var running: RunningTransition<M>?

        @usableFromInline init() {}
    }

    /// The options a host reads after it is made that a worker's hosts never set (``hooks``).
    @usableFromInline
    final class Hooks: Sendable {
        let onEnd: (@Sendable (Result<Termination<M>, HostError>) -> Void)?
        let diagnostics: (@Sendable (HostDiagnostic<M>) -> Void)?
        let ioExecutor: (any TaskExecutor)?

        /// A box of `options`' hooks; nil when none is set.
        @inlinable static func of(_ options: HostOptions<M>) -> Hooks? {
            guard options.onEnd != nil || options.diagnostics != nil || options.ioExecutor != nil else { return nil }
            return Hooks(onEnd: options.onEnd, diagnostics: options.diagnostics, ioExecutor: options.ioExecutor)
        }

        @usableFromInline
        init(onEnd: (@Sendable (Result<Termination<M>, HostError>) -> Void)?, diagnostics: (@Sendable (HostDiagnostic<M>) -> Void)?,
             ioExecutor: (any TaskExecutor)?) {
            self.onEnd = onEnd
            self.diagnostics = diagnostics
            self.ioExecutor = ioExecutor
        }
    }

    /// ``HostOptions/diagnostics``.
    nonisolated var diagnostics: (@Sendable (HostDiagnostic<M>) -> Void)? { hooks?.diagnostics }

    /// ``HostOptions/ioExecutor``.
    nonisolated var ioExecutor: (any TaskExecutor)? { hooks?.ioExecutor }

    /// ``seldom``, made if it is not yet.
    @usableFromInline
    var seldomFields: Seldom {
        if let seldom { return seldom }
        let made = Seldom()
        seldom = made
        return made
    }

    @usableFromInline
    enum Outcome {
        case ended(Termination<M>)
        case failed(HostError)
    }

    /// Inlinable, so that a caller specialized for `M` (a worker's ``HostedPath`` making an
    /// instance per fresh key) makes the host without generic code, which looked up the
    /// metadata of the host, its mailbox and their items several times per instance.
    @inlinable
    package init(
        machine: M.Type,
        env: M.Env,
        initialState: M.State?,
        performer: any IOPerformer,
        clock: any HostClock,
        options: HostOptions<M>,
        logger: Logger?,
        restoring snapshot: Snapshot<M>? = nil
    ) {
        self.address = options.address
        self.env = env
        self.clock = clock
        self.io = performer
        self.onEndAt = options.onEndAt
        self.drainScheduler = options.drainScheduler
        self.reissueRequested = options.reissuesIO
        self.hooks = Hooks.of(options)
        self.mailbox = Mailbox(capacity: options.mailboxCapacity)
        // One shared logger unless given one: a logger (and its metadata) per host would cost
        // every idle instance a few hundred bytes. The address is added where a host logs.
        self.baseLog = logger ?? sharedHostLogger
        self.trace = options.trace
        self.recorder = options.recorder
        self.reissuesIO = options.reissuesIO && M.startsReissuableIO
        self.replyHandler = options.replyHandler
        if let executor = options.executor {
            ownIsolation = nil
            executorReference = executor.asUnownedSerialExecutor()
        } else {
            let isolation = HostIsolation()
            ownIsolation = isolation
            executorReference = isolation.unownedExecutor
        }
        self._state = initialState ?? M.initialState
        if options.resumes { startsAfresh = false }
        if let snapshot {
            startsAfresh = false
            let restored = Self.restored(from: snapshot, into: mailbox)
            postponed = restored.postponed
            timersToRestore = restored.timers
            ioToReissue = restored.reissued
        }
        if let schedule = options.drainScheduler {
            mailbox.setWake(schedule)
        } else {
            mailbox.setWake { [weak self] in
                guard let host = self else { return }
                Task { await host.drainWhenWoken() }
            }
        }
    }

    /// What a host restored from `snapshot` starts with: its postponed events, timers and io to
    /// re-issue; the events it had queued go back into `mailbox`.
    @usableFromInline
    nonisolated static func restored(from snapshot: Snapshot<M>, into mailbox: Mailbox<M>)
        -> (postponed: [M.Event], timers: [Snapshot<M>.PendingTimer], reissued: [PendingReissue<M>]) {
        let (reissued, underived) = rederive(snapshot.reissuedIO ?? [])
        // What interrupted io turns into comes before what was queued: those results were
        // due before anything sent after them. The machine's own restart events come first.
        // A closure, not `\.event`: a key path in generic code is built at run time, each
        // time (7 % of a worker bringing back 50,000 instances).
        mailbox.restore(M.eventsAfterRestore(snapshot.state) + underived + snapshot.interruptedIO.map { $0.event }
            + snapshot.queuedEvents)
        return (snapshot.postponed ?? [], snapshot.timers, reissued)
    }

    /// Creates a host for `machine`. Call ``start()`` (or ``run()``) to begin processing; events
    /// sent before that wait in the mailbox, in order.
    /// - Parameters:
    ///   - machine: The machine type.
    ///   - env: Dependencies for the machine's local effects.
    ///   - initialState: Overrides `M.initialState`.
    ///   - io: Handlers for the machine's `.io` effects.
    ///   - clock: The clock for `.after` timers; `TestClock` in tests.
    ///   - options: Address, mailbox capacity, diagnostics.
    ///   - logger: Defaults to a logger labelled `grove.host`.
    public init(
        _ machine: M.Type = M.self,
        env: M.Env,
        initialState: M.State? = nil,
        io: IOHandlers = IOHandlers(),
        clock: any HostClock = WallClock(),
        options: HostOptions<M> = HostOptions(),
        logger: Logger? = nil
    ) {
        self.init(machine: machine, env: env, initialState: initialState, performer: io,
                  clock: clock, options: options, logger: logger)
    }

    /// Creates a host for a machine without an environment.
    public init(
        _ machine: M.Type = M.self,
        initialState: M.State? = nil,
        io: IOHandlers = IOHandlers(),
        clock: any HostClock = WallClock(),
        options: HostOptions<M> = HostOptions(),
        logger: Logger? = nil
    ) where M.Env == Void {
        self.init(machine: machine, env: (), initialState: initialState, performer: io,
                  clock: clock, options: options, logger: logger)
    }

    /// Releasing the host is a stop: work is cancelled and events still queued are reported.
    deinit {
        // Each step is skipped when it has nothing to do: a worker releases a host per key it
        // passivates (a million for a million keys), and this code is generic, so every loop
        // over an empty collection still looks up type metadata.
        if !registry.isEmpty {
            for (_, node) in registry.removeAll() { EffectRegistry<M>.release(node.resource) }
        }
        // Closed already, with nothing queued, when the host left memory (``passivate()``).
        if !closedForRelease {
            let released = HostError.released(address: address)
            var dropped: [M.Event] = []
            let finalState = _state
            let (replyHandler, address) = (self.replyHandler, address)
            mailbox.close(released, finalState: finalState) { queued in
                guard !queued.isEmpty else { return }
                dropped = Self.settle(Array(queued), finalState: finalState, error: released, address: address, replyHandler: replyHandler)
            }
            if !dropped.isEmpty {
                let machine = address
                baseLog.notice("events dropped", metadata: ["machine": "\(machine)", "count": "\(dropped.count)", "reason": "\(released.code.rawValue)"])
                hooks?.diagnostics?(.eventsDropped(dropped, reason: released))
            }
        }
        if !stateObservers.isEmpty { for observer in stateObservers.values { observer.finish() } }
        if !outputObservers.isEmpty { for observer in outputObservers.values { observer.finish() } }
        if !effectObservers.isEmpty { for observer in effectObservers.values { observer.finish() } }
    }

    /// Begins processing events. Idempotent.
    public nonisolated func start() { mailbox.start() }

    /// Begins processing events now, on the host's executor: what ``start()`` and the first
    /// drain it schedules do (boot, then what is queued), without scheduling that drain. For a
    /// transport on the host's executor (a worker's loop) making an instance for the event in
    /// hand: the host is idle after it, so the event is handled at once
    /// (``sendNow(_:answering:)``) instead of queued for a drain. Idempotent with ``start()``.
    @inlinable
    package func startNow() {
        guard mailbox.startUnscheduled() else { return }
        flush(rounds: 1)
    }

    /// Queues `event` without waiting for it to be processed.
    /// - Throws: `HostError` with code `mailboxFull` when the mailbox is at capacity (the machine
    ///   keeps running), or `terminated`, `stopped`, `effectFailed` once the machine has ended.
    @inlinable
    public nonisolated func send(_ event: M.Event) throws(HostError) {
        do {
            try mailbox.enqueueExternal(.event(event), address: address)
        } catch {
            refused(event, error)
            throw error
        }
    }

    @usableFromInline
    nonisolated func refused(_ event: M.Event, _ error: HostError) {
        if error.code == .mailboxFull { diagnostics?(.mailboxOverflow(event: event)) }
    }

    /// Sends `event` and returns the state committed by it: the state after `update` handled it
    /// and after the inline events it returned were processed. Cancelling the waiting task does
    /// not undo the event.
    /// - Throws: `HostError` when the event was not accepted or the machine ended before it ran.
    @inlinable
    public func sendAndWait(_ event: M.Event) async throws(HostError) -> M.State {
        if !isRunning, let outcome { throw error(for: outcome) }
        guard booted || mailbox.isStarted else { return try await sendAndWaitBeforeStart(event) }
        bootIfNeeded()
        drainNow()
        if !isRunning, let outcome { throw error(for: outcome) }
        handle(.event(event))
        if !isRunning { return try finishedDuringSendAndWait() }
        return _state
    }

    @usableFromInline
    func sendAndWaitBeforeStart(_ event: M.Event) async throws(HostError) -> M.State {
        let result = await withCheckedContinuation { waiter in
            do throws(HostError) {
                try mailbox.enqueueExternal(.eventAwaitingState(event, { result, _ in waiter.resume(returning: result) }), address: address)
            } catch {
                waiter.resume(returning: .failure(error))
            }
        }
        return try result.get()
    }

    @usableFromInline
    func finishedDuringSendAndWait() throws(HostError) -> M.State {
        finishRun(droppedBefore: EmptyCollection())
        if let outcome, case .failed(let failure) = outcome { throw failure }
        return _state
    }

    /// Queues `event` like ``send(_:)`` and calls `onCommitted` on the host's actor with the state
    /// the event committed (after its inline events) and whether `update` left the event
    /// unhandled, or with the error that kept it from running.
    /// Sends from one thread are processed in the order they were made, which is what a transport
    /// needs to keep per-machine FIFO while answering each sender.
    /// - Throws: `HostError` when the event was not accepted; `onCommitted` is then never called.
    @inlinable
    package nonisolated func send(
        _ event: M.Event, onCommitted: @escaping @Sendable (Result<M.State, HostError>, _ unhandled: Bool) -> Void
    ) throws(HostError) {
        do {
            try mailbox.enqueueExternal(.eventAwaitingState(event, onCommitted), address: address)
        } catch {
            refused(event, error)
            throw error
        }
    }

    /// Queues `event` like ``send(_:onCommitted:)``, answered through ``HostOptions/replyHandler``
    /// with `token`: a transport that answers many senders sets one handler instead of making
    /// a closure per event. The host must have a reply handler.
    /// - Throws: `HostError` when the event was not accepted; the handler is then never called.
    @inlinable
    package nonisolated func send(_ event: M.Event, replyToken token: UInt64) throws(HostError) {
        precondition(replyHandler != nil, "send(_:replyToken:) needs HostOptions.replyHandler")
        do {
            try mailbox.enqueueExternal(.eventAwaitingReply(event, token), address: address)
        } catch {
            refused(event, error)
            throw error
        }
    }

    /// Handles `event` now, on the host's executor, and calls `answer` with the state it
    /// committed (or why it did not run): what ``send(_:onCommitted:)`` and the drain after it
    /// do, without the queue, a drain, their locks and an escaping closure. Only when that keeps
    /// the FIFO: the host ran before, has not ended, and nothing is queued or being drained;
    /// otherwise it does nothing (`answer` is not called) and returns `false`, and the caller
    /// queues the event.
    ///
    /// For a transport running on the host's executor (a worker's I/O loop), which hands events
    /// to many hosts: most find their host idle. `answer` runs before the host reports an end
    /// the event caused, as a queued event's answer would.
    @inlinable
    package func sendNow(_ event: M.Event, answering answer: (Result<M.State, HostError>, _ unhandled: Bool) -> Void) -> Bool {
        guard isIdle else { return false }
        handleAwaiting(event, answer)
        if !isRunning { finishRun(droppedBefore: EmptyCollection()) }
        return true
    }

    /// Handles `event` now, like ``sendNow(_:answering:)``, for a sender that waits for nothing.
    @inlinable
    package func sendNow(_ event: M.Event) -> Bool {
        guard isIdle else { return false }
        apply(event, origin: .sent)
        if !inline.isEmpty || !inlineBuffer.isEmpty { runInline() }
        if !isRunning { finishRun(droppedBefore: EmptyCollection()) }
        return true
    }

    /// Takes over an event whose `update` already ran outside the host, on the state the host
    /// holds now: `state` is what it committed and `effect` what it returned. Commits them and
    /// runs the effect as ``sendNow(_:answering:)`` would have after its own `update`, and
    /// answers with the state committed (nil `answer`: a sender that waits for nothing). For a
    /// worker that runs a resting instance's event on its state alone and makes a host only when
    /// the transition needs one (an effect, an observer, a terminal state): `update` runs once.
    /// Returns false and does nothing when the host is not idle (``sendNow(_:answering:)``).
    @inlinable
    package func takeOverNow(_ state: M.State, effect: MachineEffect<M>, after event: M.Event,
                             answering answer: ((Result<M.State, HostError>, _ unhandled: Bool) -> Void)?) -> Bool {
        guard isIdle else { return false }
        unhandledLast = false
        _state = state
        committed(effect, event: event, origin: .sent)
        let unhandled = unhandledLast
        if !inline.isEmpty || !inlineBuffer.isEmpty { runInline() }
        if let answer {
            if !isRunning, let outcome, case .failed(let error) = outcome {
                answer(.failure(error), false)
            } else {
                answer(.success(_state), unhandled)
            }
        }
        if !isRunning { finishRun(droppedBefore: EmptyCollection()) }
        return true
    }

    /// Runs `body` isolated to the host, for a caller already running on the host's executor
    /// (``HostOptions/executor``): a worker's I/O loop handing an event to one of its hosts.
    ///
    /// Debug builds check that with `assumeIsolated`, which traps otherwise. Release builds skip
    /// the check (about 2 % of a worker's loop thread under load: a thread-local read, an
    /// executor comparison and a cast per event) and call `body` as `assumeIsolated` does after
    /// its check. A caller on another thread would then race the host instead of trapping, so
    /// this is for the one caller that owns the executor; tests run it checked.
    @inlinable
    package nonisolated func onOwnExecutor<T: Sendable>(_ body: (isolated MachineHost) -> T) -> T {
        #if DEBUG
        return assumeIsolated(body)
        #else
        return withoutActuallyEscaping(body) { body in
            unsafeBitCast(body, to: ((MachineHost) -> T).self)(self)
        }
        #endif
    }

    /// ``onOwnExecutor(_:)`` for a `body` that captures nothing and takes what it needs as
    /// `argument`: the form for a path run per event. A closure that captures nothing has no
    /// context, so release builds call it with no allocation, where making a capturing one
    /// escape for the cast (`withoutActuallyEscaping`) boxes it twice per call.
    @inlinable
    package nonisolated func onOwnExecutor<A, T: Sendable>(with argument: A, _ body: @escaping (isolated MachineHost, A) -> T) -> T {
        #if DEBUG
        preconditionIsolated("onOwnExecutor(with:_:) called off the host's executor")
        #endif
        return unsafeBitCast(body, to: ((MachineHost, A) -> T).self)(self, argument)
    }

    /// ``sendNow(_:)`` called from the host's own executor, as ``onOwnExecutor(_:)`` would call
    /// it but with no closure to box: per event, on a worker's loop.
    @inlinable
    package nonisolated func sendNowOnOwnExecutor(_ event: M.Event) -> Bool {
        let body: (isolated MachineHost, M.Event) -> Bool = { host, event in host.sendNow(event) }
        #if DEBUG
        preconditionIsolated("sendNowOnOwnExecutor(_:) called off the host's executor")
        #endif
        return unsafeBitCast(body, to: ((MachineHost, M.Event) -> Bool).self)(self, event)
    }

    /// ``sendNow(_:answering:)`` called from the host's own executor, as
    /// ``sendNowOnOwnExecutor(_:)`` is.
    @inlinable
    package nonisolated func sendNowOnOwnExecutor(_ event: M.Event, answering answer: (Result<M.State, HostError>, _ unhandled: Bool) -> Void) -> Bool {
        typealias Answer = (Result<M.State, HostError>, Bool) -> Void
        let body: (isolated MachineHost, M.Event, Answer) -> Bool = { host, event, answer in host.sendNow(event, answering: answer) }
        #if DEBUG
        preconditionIsolated("sendNowOnOwnExecutor(_:answering:) called off the host's executor")
        #endif
        return unsafeBitCast(body, to: ((MachineHost, M.Event, Answer) -> Bool).self)(self, event, answer)
    }

    /// Booted, running, not in the middle of processing, and its mailbox idle.
    @inlinable
    var isIdle: Bool {
        booted && isRunning && inline.isEmpty && inlineBuffer.isEmpty && mailbox.isIdle
    }

    /// Answers `reply` with the state once every event queued before this call was processed,
    /// before any event queued after it: a transport's read that keeps its place in the FIFO.
    /// A machine that ended answers with its final state.
    package nonisolated func requestState(_ reply: @escaping @Sendable (M.State) -> Void) {
        enqueue(.state(reply))
    }

    /// Stops the machine after every event queued before this call, as ``stop()`` would, and
    /// answers with its final state; events queued after it are dropped and refused.
    package nonisolated func requestStop(_ reply: @escaping @Sendable (M.State) -> Void) {
        enqueue(.stop(reply))
    }

    /// Cancels the work running under `id` after every event queued before this call (see
    /// ``cancelEffect(_:)``), then calls `done`.
    package nonisolated func requestCancel(_ id: EffectID, _ done: @escaping @Sendable () -> Void) {
        enqueue(.cancel(id, done))
    }

    /// Calls `answer` when its turn comes, after everything queued before: a transport's refusal
    /// (say, of an event it could not decode) that must not overtake earlier replies.
    package nonisolated func requestAnswer(_ answer: @escaping @Sendable () -> Void) {
        enqueue(.answer(answer))
    }

    /// Requests are never refused for capacity: a stop must reach a machine whose mailbox is full.
    /// Once the machine has ended they are answered at once, on this thread, with its final state.
    private nonisolated func enqueue(_ request: HostRequest<M>) {
        if let finalState = mailbox.post(request) {
            Self.answer(request, finalState: finalState)
        }
    }

    /// Cancels the work running under `id`, as the machine's own `.cancel(id)` would: its late
    /// results are never delivered. A no-op for unknown or finished ids.
    /// - Parameter id: The effect id, e.g. `"fetch"`.
    public func cancelEffect(_ id: EffectID) {
        cancel(id)
    }

    /// Stops the machine: cancels all work, reports queued events as dropped, fails later sends.
    public func stop() {
        guard isRunning else { return }
        end(.ended(Termination(reason: .stopped, finalState: _state, lastOutput: lastOutput, droppedEvents: [])))
        finishRun(droppedBefore: EmptyCollection())
    }

    /// Starts the machine if needed and waits until it ends.
    /// - Returns: How the run ended: a terminal state or `stop()`.
    /// - Throws: `HostError` with code `effectFailed` when an effect failed under the `.fail` policy.
    public func run() async throws(HostError) -> Termination<M> {
        start()
        return try await termination()
    }

    /// Waits until the machine ends, without starting it.
    public func termination() async throws(HostError) -> Termination<M> {
        if let outcome { return try result(for: outcome).get() }
        return try await withCheckedContinuation { completionWaiters.append($0) }.get()
    }

    /// The ids of work in flight, for tests and introspection.
    public var inFlightEffects: Set<EffectID> { Set(registry.nodes.keys) }

    /// How many tasks (operations, tasks, streams, io) are in flight; timers are not counted.
    package var runningTaskCount: Int {
        registry.nodes.values.count {
            switch $0.resource {
            case .task, .io: true
            case .timer, .group, .inline: false
            }
        }
    }

    /// External events taken and not yet run, for a worker's metrics (its mailbox depth): a
    /// lock, from any thread.
    package nonisolated var queuedEventCount: Int { mailbox.externalDepth }

    /// `true` once the machine reached a terminal state, was stopped or failed.
    public var hasEnded: Bool { !isRunning }

    /// Whether a ``snapshot()`` taken now would carry the state alone: no effect in flight, no
    /// timer to restore, nothing queued or postponed. Inlinable, so a caller specialized for `M` (a worker
    /// writing durable instances) skips building and encoding a whole snapshot, which unspecialized
    /// costs several generic metadata lookups per instance.
    @inlinable
    package var holdsOnlyState: Bool {
        registry.isEmpty && timersToRestore.isEmpty && ioToReissue.isEmpty && postponed.isEmpty && mailbox.isIdle
    }

    /// Whether the instance may leave memory now (a worker's passivation): not ended, nothing
    /// queued or running, nothing postponed or to re-issue, and no work in flight but top-level
    /// timers, which a snapshot carries at their deadlines. Returns `.idle` with the earliest
    /// timer's deadline (nil: none), or `.busy`.
    ///
    /// Inlinable, so that a worker's specialized path for the machine type asks it without
    /// generic code (a sweep asks every instance idle long enough); what holds work or
    /// timers is walked in ``restingHolding``.
    @inlinable
    package var resting: Resting {
        guard isRunning, postponed.isEmpty, ioToReissue.isEmpty, mailbox.isIdle else { return .busy }
        // What most instances a sweep lets go hold: nothing.
        if registry.isEmpty, timersToRestore.isEmpty { return .idle(earliestTimer: nil) }
        return restingHolding
    }

    /// ``resting`` for a host that holds work or timers.
    @usableFromInline
    var restingHolding: Resting {
        // A closure, not `\.deadline`: a key path in generic code is built at run time, each
        // time (a third of judging an instance in a debug build's sweep).
        var earliest = timersToRestore.lazy.map { $0.deadline }.min()
        for node in registry.nodes.values {
            switch node.resource {
            case .timer(_, let deadline, _):
                // A timer a snapshot carries (top level, or in an anonymous merge); one that is a
                // sequence step or in a named merge would not come back as it was.
                guard registry.restoresOnItsOwn(under: node.parent) else { return .busy }
                earliest = earliest.map { min($0, deadline) } ?? deadline
            case .group:
                // What it holds is judged on its own; a sequence's later steps are in its timer's case.
                continue
            case .task, .io, .inline:
                return .busy
            }
        }
        return .idle(earliestTimer: earliest)
    }

    /// Cancels the instance's timers without ending it (no `onEnd`, no trace): it is leaving
    /// memory, its timers kept in its record, and must not fire here again. Inlinable, like
    /// ``resting``: most instances leave holding nothing, and then it only closes the mailbox.
    ///
    /// Its mailbox is closed here when nothing is queued, as its release would close it (later
    /// sends are refused as released), so that its deinit, generic code, skips that: a worker
    /// releases a host per key it passivates.
    @inlinable
    package func passivate() {
        if !registry.isEmpty || !timersToRestore.isEmpty || !stateObservers.isEmpty || !outputObservers.isEmpty
            || !effectObservers.isEmpty {
            passivateHolding()
        }
        if !closedForRelease {
            closedForRelease = mailbox.closeIfEmpty(.released(address: address), finalState: _state)
        }
    }

    /// ``passivate()`` for a host that holds work, timers or watchers.
    @usableFromInline
    func passivateHolding() {
        if !registry.isEmpty {
            for (id, node) in registry.removeAll() {
                EffectRegistry<M>.release(node.resource)
                noteEnded(id, node.resource, .passivated)
            }
        }
        if !timersToRestore.isEmpty { timersToRestore = [] }
        // Its watchers' and outputs' streams end, so the tasks reading them let the host go.
        if !stateObservers.isEmpty {
            for observer in stateObservers.values { observer.finish() }
            stateObservers = [:]
        }
        if !outputObservers.isEmpty {
            for observer in outputObservers.values { observer.finish() }
            outputObservers = [:]
        }
        if !effectObservers.isEmpty {
            for observer in effectObservers.values { observer.finish() }
            effectObservers = [:]
        }
    }

    /// The events the machine postponed and has not had again yet, oldest first.
    public var postponedEvents: [M.Event] { postponed }

    /// Processes everything queued right now, on the caller's turn of the actor. Work still
    /// running is not awaited. Tests driving a `TestClock` by hand use it to settle the host after
    /// each timer fires: `await clock.advance(by: .seconds(1)) { await host.flush() }`.
    @inlinable
    public func flush() {
        // Booted implies started: the mailbox's lock is taken only before the first run.
        if !booted {
            guard mailbox.isStarted else { return }
            boot()
        }
        drainNow()
    }

    /// ``flush()`` for hosts that share an executor (a worker's I/O thread): at most `rounds`
    /// batches of the mailbox, then, when work may be left, a wake-up through
    /// ``HostOptions/drainScheduler`` for a later turn, so that a stream of results that never
    /// lets the mailbox empty cannot hold the executor.
    @inlinable
    package func flush(rounds: Int) {
        if !booted {
            guard mailbox.isStarted else { return }
            boot()
        }
        if drainNow(rounds: rounds) { drainLater() }
    }

    /// Asks for another drain: through the transport's scheduler, else in a task of its own.
    @usableFromInline
    func drainLater() {
        if let schedule = drainScheduler { schedule() } else { Task { self.flush() } }
    }

    @usableFromInline
    func error(for outcome: Outcome) -> HostError {
        switch outcome {
        case .failed(let error): error
        case .ended(let termination):
            termination.reason == .stopped ? .stopped(address: address) : .terminated(address: address)
        }
    }

    func result(for outcome: Outcome) -> Result<Termination<M>, HostError> {
        switch outcome {
        case .failed(let error): .failure(error)
        case .ended(let termination): .success(termination)
        }
    }
}

/// Whether a host may leave memory (``MachineHost/resting``).
@usableFromInline
package enum Resting: Equatable, Sendable {
    /// Something is queued, running or in flight, or it ended.
    case busy
    /// Nothing but timers, the earliest due at `earliestTimer` (nil: no timer).
    case idle(earliestTimer: Timestamp?)
}

/// The actor whose executor a host without ``HostOptions/executor`` runs on.
@usableFromInline
final actor HostIsolation {
    @usableFromInline init() {}
}
