public import Grove

/// Something a host noticed that is not a normal transition. Delivered to
/// `HostOptions.diagnostics` and logged; never silently lost.
public enum HostDiagnostic<M: Machine>: Sendable {
    /// `update` returned `.unhandled`: the state was left as it was.
    case unhandled(state: M.State, event: M.Event)
    /// Work threw an error that was not cancellation. Under the default policy, when the
    /// machine gave no ``Machine/failureEvent(_:)``, the machine keeps running; under `.fail`
    /// it stops.
    case effectFailed(id: EffectID, error: any Error)
    /// Events that were accepted but will never be processed, because the machine ended.
    case eventsDropped([M.Event], reason: HostError)
    /// A send was refused because the mailbox was full.
    case mailboxOverflow(event: M.Event)
    /// Async work returned by the transition into a terminal state was not started.
    case effectsSkippedAtTermination(count: Int)
    /// An io request whose type re-issues (``IOInterruption/reissue``) started on a host with
    /// ``HostOptions/reissuesIO`` whose machine type does not declare
    /// ``Machine/startsReissuableIO``: the host kept no state to derive it from, so its
    /// snapshots carry it as interrupted. Declare `static var startsReissuableIO: Bool { true }`
    /// on the machine.
    case reissueNotKept(id: EffectID, request: String)
    /// `.postpone` where it keeps nothing: inside a `.merge` or `.sequence`, from a
    /// ``StateScoped/enter(_:)`` or ``StateScoped/exit(_:)`` effect, or from a transition whose
    /// effect a parent machine nested. Return it as the whole effect of the transition.
    case postponeIgnored
}

/// How a host is configured.
public struct HostOptions<M: Machine>: Sendable {
    /// The machine address used in errors and logs (`name` or `name/key`).
    public var address: String
    /// How many external events may wait in the mailbox; a send beyond that fails with
    /// `HostError.Code.mailboxFull`.
    public var mailboxCapacity: Int
    /// Called for every ``HostDiagnostic``, on the host's actor or the sender's thread.
    public var diagnostics: (@Sendable (HostDiagnostic<M>) -> Void)?
    /// Called with every transition, unhandled event, output and finished piece of work, in
    /// order, on the host's actor. `nil` (the default) costs nothing on the hot path.
    public var trace: (@Sendable (HostTrace<M>) -> Void)?
    /// Called once when the run ends (terminal state, `stop()`, or an effect failure under
    /// `.fail`), on the host's actor, with what `run()` returns. Transports use it to announce
    /// that a machine ended.
    public var onEnd: (@Sendable (Result<Termination<M>, HostError>) -> Void)?
    /// ``onEnd`` told the host's address, called after it: since it is told the address, one
    /// function can serve every host of a machine type, instead of a closure (and the box of
    /// what it captures) made per host.
    @usableFromInline package var onEndAt: (@Sendable (String, Result<Termination<M>, HostError>) -> Void)?
    /// Replaces the task a host starts to drain its mailbox when work arrives. Whoever sets it
    /// must then call ``MachineHost/flush()`` soon: a transport drains every host a received
    /// batch touched in one task, instead of one task per host.
    @usableFromInline package var drainScheduler: (@Sendable () -> Void)?
    /// Answers the senders of events sent with ``MachineHost/send(_:replyToken:)``: called on
    /// the host's actor with the sender's token, the host's address and the state the event
    /// committed, or why it did not run. Instead of a closure per event; since it is told the
    /// address, one function can serve every host of a machine type.
    @usableFromInline package var replyHandler: (@Sendable (UInt64, String, Result<M.State, HostError>, Bool) -> Void)?
    /// Where the host's code runs. `nil` (the default): an executor of its own on the shared
    /// pool, like any actor's. A transport gives the hosts of one process a serial executor they
    /// share with their caller, so calls between them need no executor switch.
    @usableFromInline package var executor: (any SerialExecutor)?
    /// Told which event is about to run (``RunRecorder/willRun``) and that it returned
    /// (``RunRecorder/didRun``): a worker's flight recorder, which names the event that was
    /// running when its process died. `nil` (the default) costs one branch per event.
    @usableFromInline package var recorder: RunRecorder<M>?
    /// Whether the host keeps, for each io request in flight whose type re-issues
    /// (``IOInterruption/reissue``), the transition that started it, so that ``MachineHost/snapshot()``
    /// carries the request to be sent again (``Snapshot/reissuedIO``). `false` (the default):
    /// such a request is carried as its interrupted failure, like any other. `true` keeps the
    /// state before each event of a machine type that declares ``Machine/startsReissuableIO``
    /// (a state whose collections `update` changes is then copied whole, per event) and costs
    /// other machine types nothing; a worker sets it for its durable machines.
    public var reissuesIO = false
    /// Whether the host continues an instance that started before, elsewhere than in a host (a
    /// worker's table of states): its initial state is where the instance is now, and its boot
    /// runs no start effect (``Machine/startEffect(_:)``), as a host restored from a snapshot
    /// runs none. `false` (the default): a new instance, which runs it.
    @usableFromInline package var resumes = false
    /// Where the task of each `.io` call starts. `nil` (the default): the shared pool. A test
    /// that runs a worker on an executor of its own gives that executor here, so the call into
    /// the worker runs when the test runs it, never on a thread the test does not drive.
    @usableFromInline package var ioExecutor: (any TaskExecutor)?

    /// - Parameters:
    ///   - address: Defaults to the machine type's name.
    ///   - mailboxCapacity: Defaults to 65,536 events.
    ///   - diagnostics: Receives unhandled events, effect failures and dropped events.
    ///   - trace: Receives every transition; see ``trace``.
    public init(
        address: String = String(describing: M.self),
        mailboxCapacity: Int = 65_536,
        diagnostics: (@Sendable (HostDiagnostic<M>) -> Void)? = nil,
        trace: (@Sendable (HostTrace<M>) -> Void)? = nil
    ) {
        precondition(mailboxCapacity > 0, "mailboxCapacity must be at least 1")
        self.address = address
        self.mailboxCapacity = mailboxCapacity
        self.diagnostics = diagnostics
        self.trace = trace
    }
}

/// How a run ended.
public struct Termination<M: Machine>: Sendable {
    /// Why the run ended.
    public enum Reason: Sendable, Equatable {
        /// The machine entered a terminal state.
        case terminalState
        /// `stop()` was called.
        case stopped
    }

    /// Why the run ended.
    public var reason: Reason
    /// The state the machine ended in.
    public var finalState: M.State
    /// The last output emitted, or the initial output when the initial state was terminal.
    public var lastOutput: M.Output?
    /// Events accepted but never processed, oldest first.
    public var droppedEvents: [M.Event]
}

/// What a host calls around each event it runs: before `update` (with the event and where it
/// came from) and after `update` and the start of its effect returned. A trap in between leaves
/// `willRun`'s note in place, which is the point: the worker's flight recorder survives the
/// process and names the event.
@usableFromInline
package struct RunRecorder<M: Machine>: Sendable {
    /// Called with the host's address, the event, where it came from, and the reply token of
    /// the request that carried a queued event whose sender waits (``HostOptions/replyHandler``'s;
    /// 0 otherwise). Told the address, one recorder can serve every host of a machine type
    /// instead of a closure (and the box of what it captures) made per host.
    @usableFromInline package let willRun: @Sendable (String, M.Event, EventOrigin, UInt64) -> Void
    @usableFromInline package let didRun: @Sendable () -> Void

    package init(willRun: @escaping @Sendable (String, M.Event, EventOrigin, UInt64) -> Void, didRun: @escaping @Sendable () -> Void) {
        self.willRun = willRun
        self.didRun = didRun
    }
}
