public import Grove
public import DequeModule
public import Synchronization

/// Identifies one start of one piece of work: its id plus the generation token it was started
/// with. A key whose token is no longer live in the registry belongs to cancelled or replaced work.
@usableFromInline
struct JobKey: Hashable, Sendable {
    @usableFromInline let id: EffectID
    @usableFromInline let token: UInt64

    @usableFromInline init(id: EffectID, token: UInt64) {
        self.id = id
        self.token = token
    }
}

/// A request that keeps its place in a machine's FIFO: answered after every event queued before
/// it, before every event queued after it.
@usableFromInline
enum HostRequest<M: Machine>: Sendable {
    /// Answers with the current state.
    case state(@Sendable (M.State) -> Void)
    /// Stops the machine (later events are dropped and refused) and answers with its final state.
    case stop(@Sendable (M.State) -> Void)
    /// Cancels the work running under the id, then answers.
    case cancel(EffectID, @Sendable () -> Void)
    /// Only answers, in turn: a reply (a refusal) that must not overtake earlier ones.
    case answer(@Sendable () -> Void)
}

/// What reaches a host from outside its actor: sends, and reports from running work.
@usableFromInline
enum MailItem<M: Machine>: Sendable {
    case event(M.Event)
    /// An event whose sender is told the state it committed (or why it never ran), and whether
    /// `update` left it unhandled.
    case eventAwaitingState(M.Event, @Sendable (Result<M.State, HostError>, _ unhandled: Bool) -> Void)
    /// The same, answered through the host's ``HostOptions/replyHandler`` with this token.
    case eventAwaitingReply(M.Event, UInt64)
    case delivered(M.Event, JobKey)
    case finished(JobKey)
    /// Work threw under the `.fail` policy: the machine stops.
    case failed(JobKey, any Error)
    /// Work threw and the machine gave no ``Machine/failureEvent(_:)``: reported, the machine
    /// runs on.
    case errored(JobKey, any Error)
    case timerFired(JobKey)
    /// A transport's read, stop or cancel, answered when its turn comes among the events.
    case request(HostRequest<M>)

    /// Events a sender handed over (as opposed to reports from the machine's own work).
    @inlinable
    var isExternal: Bool {
        switch self {
        case .event, .eventAwaitingState, .eventAwaitingReply: true
        case .delivered, .finished, .failed, .errored, .timerFired, .request: false
        }
    }
}

/// The host's inbox: a bounded FIFO for external events plus an unbounded lane for reports from
/// work already accepted. Lock-protected so `send` is synchronous and callable from anywhere;
/// the host drains it in batches on its actor.
@usableFromInline
final class Mailbox<M: Machine>: Sendable {
    @usableFromInline
    struct Inner: ~Copyable {
        @usableFromInline var queue: Deque<MailItem<M>> = []
        @usableFromInline var externalCount = 0
        @usableFromInline var started = false
        @usableFromInline var drainScheduled = false
        @usableFromInline var closedBy: HostError?
        @usableFromInline var wake: (@Sendable () -> Void)?
        /// The state the machine ended in, once closed: requests arriving later are answered with it.
        @usableFromInline var finalState: M.State?

        @inlinable init() {}
    }

    /// What an attempt to enqueue found.
    @usableFromInline
    enum Admission {
        case accepted(wake: (@Sendable () -> Void)?)
        case full
        case closed(HostError)
    }

    @usableFromInline let capacity: Int
    @usableFromInline let inner: Mutex<Inner>

    /// Inlinable with what it makes (a default value here was a function of its own, generic
    /// code run per host): a host made specialized for its machine type makes its mailbox
    /// without looking up the metadata of the mailbox's lock and items.
    @inlinable
    init(capacity: Int) {
        self.capacity = capacity
        inner = Mutex(Inner())
    }

    @inlinable
    func setWake(_ wake: @escaping @Sendable () -> Void) {
        inner.withLock { $0.wake = wake }
    }

    /// Marks the host as running without scheduling a drain, for a host that drains at once on
    /// its own executor (``MachineHost/startNow()``): the drain flag is set as ``start()`` sets
    /// it, and that drain's take clears it. Whether it started now.
    @usableFromInline
    func startUnscheduled() -> Bool {
        inner.withLock { state in
            guard !state.started else { return false }
            state.started = true
            state.drainScheduled = true
            return true
        }
    }

    /// Marks the host as running and schedules a first drain.
    func start() {
        let wake: (@Sendable () -> Void)? = inner.withLock { state in
            guard !state.started else { return nil }
            state.started = true
            state.drainScheduled = true
            return state.wake
        }
        wake?()
    }

    @inlinable
    var isStarted: Bool { inner.withLock { $0.started } }

    /// Started, open, and nothing queued or being drained: an event handled now keeps its place
    /// in the FIFO (``MachineHost/sendNow(_:answering:)``).
    ///
    /// The queue itself is not read: once started, whatever is queued has a drain scheduled
    /// (``start()`` schedules one, every later append does, a take clears the flag only when it
    /// finds the queue empty, and ``restore(_:)`` runs only before the start). Reading the
    /// queue's count would touch its storage, a cache miss per event on a worker whose events
    /// go to many hosts.
    @inlinable
    var isIdle: Bool {
        inner.withLock { state in
            assert(!state.started || state.drainScheduled || state.queue.isEmpty, "a started mailbox holds items without a drain scheduled")
            return state.started && !state.drainScheduled && state.closedBy == nil
        }
    }

    /// Accepts an external event unless the mailbox is full or closed.
    @inlinable
    func enqueueExternal(_ item: consuming MailItem<M>, address: String) throws(HostError) {
        // Moved into the queue, not copied: a copy retains the event's payload once more.
        var item = Optional(item)
        let admission: Admission = inner.withLock { state in
            if let closed = state.closedBy { return .closed(closed) }
            guard state.externalCount < capacity else { return .full }
            state.externalCount += 1
            state.queue.append(item.take()!)
            return .accepted(wake: Mailbox.scheduleDrain(&state))
        }
        switch admission {
        case .accepted(let wake): wake?()
        case .full: throw .mailboxFull(address: address, capacity: capacity)
        case .closed(let error): throw error
        }
    }

    /// Accepts a report from running work. Reports are never refused for capacity: the work was
    /// already accepted. Fails only once the host has stopped.
    func post(_ item: MailItem<M>) throws(CancellationError) {
        let wake: (@Sendable () -> Void)?? = inner.withLock { state in
            guard state.closedBy == nil else { return .none }
            state.queue.append(item)
            return .some(Mailbox.scheduleDrain(&state))
        }
        guard let wake else { throw CancellationError() }
        wake?()
    }

    @inlinable
    static func scheduleDrain(_ state: inout Inner) -> (@Sendable () -> Void)? {
        guard state.started, !state.drainScheduled else { return nil }
        state.drainScheduled = true
        return state.wake
    }

    /// Frees capacity for the `processed` external events the host handled since its last take,
    /// then takes everything queued; one lock for both. When nothing is queued, clears the drain
    /// flag so the next item schedules a new drain. External events taken still count against
    /// the capacity until a later take reports them processed.
    func take(processed: Int) -> Deque<MailItem<M>> {
        var batch: Deque<MailItem<M>> = []
        take(processed: processed, into: &batch)
        return batch
    }

    /// ``take(processed:)`` into the caller's empty `batch`, trading buffers: the mailbox keeps
    /// `batch`'s storage. A host that drains after every event so reuses two buffers instead of
    /// allocating and freeing one per drain.
    @inlinable
    func take(processed: Int, into batch: inout Deque<MailItem<M>>) {
        assert(batch.isEmpty, "take(processed:into:) needs an empty batch")
        inner.withLock { state in
            state.externalCount -= processed
            if state.queue.isEmpty { state.drainScheduled = false }
            swap(&state.queue, &batch)
        }
    }

    /// Counts `processed` external events as handled without taking more (a drain that stops at
    /// its budget).
    @inlinable
    func release(processed: Int) {
        guard processed > 0 else { return }
        inner.withLock { $0.externalCount -= processed }
    }

    /// Closes the mailbox: later sends fail with `reason`, later requests are answered with
    /// `finalState`. `settle` gets what was still queued, under the lock, so that nothing sent
    /// after the close is answered before what was queued before it.
    func close(_ reason: HostError, finalState: M.State, settle: (Deque<MailItem<M>>) -> Void) {
        inner.withLock { state in
            if state.closedBy == nil { state.closedBy = reason }
            if state.finalState == nil { state.finalState = finalState }
            state.externalCount = 0
            state.wake = nil
            settle(Swift.exchange(&state.queue, with: []))
        }
    }

    /// Closes the mailbox as ``close(_:finalState:settle:)`` does when nothing is queued, and
    /// says whether it did; a mailbox holding items is left open for that. Inlinable: a worker
    /// closes one per instance it passivates, from code specialized for the machine type.
    @inlinable
    func closeIfEmpty(_ reason: HostError, finalState: M.State) -> Bool {
        inner.withLock { state in
            guard state.queue.isEmpty else { return false }
            if state.closedBy == nil { state.closedBy = reason }
            if state.finalState == nil { state.finalState = finalState }
            state.externalCount = 0
            state.wake = nil
            return true
        }
    }

    /// Queues a request; returns nil, or the final state when the mailbox is closed (the
    /// caller answers with it at once, after everything queued before the close was settled).
    func post(_ request: HostRequest<M>) -> M.State? {
        let outcome: (wake: (@Sendable () -> Void)?, final: M.State?) = inner.withLock { state in
            if state.closedBy != nil { return (nil, state.finalState) }
            state.queue.append(.request(request))
            return (Mailbox.scheduleDrain(&state), nil)
        }
        outcome.wake?()
        return outcome.final
    }

    /// Puts restored events back in the queue, ahead of anything sent later, ignoring capacity.
    /// Before ``start()`` only (the host's init), which then schedules their drain.
    @usableFromInline
    func restore(_ events: [M.Event]) {
        inner.withLock { state in
            assert(!state.started, "restore(_:) after start(): its events would have no drain scheduled")
            state.queue.append(contentsOf: events.map { .event($0) })
            state.externalCount += events.count
        }
    }

    /// How many external events are queued (taken and not yet run): a lock and a read.
    var externalDepth: Int { inner.withLock { $0.externalCount } }

    /// The external events queued right now, oldest first (for snapshots).
    func queuedEvents() -> [M.Event] {
        inner.withLock { state in
            state.queue.compactMap { item in
                switch item {
                case .event(let event), .eventAwaitingState(let event, _), .eventAwaitingReply(let event, _): event
                case .delivered, .finished, .failed, .errored, .timerFired, .request: nil
                }
            }
        }
    }
}
