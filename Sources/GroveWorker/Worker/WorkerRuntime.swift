import Foundation
import Grove
import GroveCluster
import GroveRuntime
@_spi(GroveInternal) import GroveWire
import Logging
import ZeroMQ

/// The machines and io work of one worker process. It lives on the I/O loop's thread (its
/// executor), and so do its hosts. Messages from the coordinator arrive in order through
/// ``handle(_:)``, called by the loop for each received batch, so per-machine FIFO holds: events
/// are handed to their hosts synchronously, in arrival order (handled at once by an idle host,
/// else queued behind what it has). What each message is for, and what the session does, is
/// decided by ``WorkerCore``; this actor only carries its decisions and actions out.
actor WorkerRuntime {
    let configuration: WorkerConfiguration
    /// The configuration's factories, bound to this worker's link, turn, poison watch and inlet.
    /// Each made anew when the flight recorder opens (``openFlightRecorder()``).
    var factories: [String: any HostedMachineFactory]
    /// The socket to the coordinator.
    let link: WorkerLink
    /// What the current turn holds back until it ends (``endTurn()``): messages, woken hosts,
    /// durable changes, audit lines, ended instances.
    let turn: Turn
    /// The flight recorder and the quarantined events (poison events).
    let poison: PoisonWatch
    /// The way into this runtime for what machines send on their own (io calls to other
    /// workers, outputs).
    let inlet: CoreInlet
    /// What watchers subscribe to; state changes nobody watches are not sent.
    let observation = WatchedTopics()
    /// The tasks of this worker's machines waiting for io calls to other workers, by the call
    /// id the core gave each: resumed when the core says (`WorkerRuntime+Machines.swift`).
    var waiters: [UInt64: CheckedContinuation<IOCallResult, Never>] = [:]
    let log: Logger
    /// The process's tracer, read once when the runtime is made; `nil` (none bootstrapped)
    /// makes tracing one test of this constant per traced message (`WorkerRuntime+Tracing.swift`).
    let tracing: WireTracing?
    /// Closes the DEALER and opens a new one to the coordinator (on the I/O thread, in order
    /// with what is sent after it).
    private let reconnect: @Sendable () -> Void
    /// The decisions: the session with the coordinator (registration, heartbeats, silence), what
    /// each message is for, where machines are placed, which io calls are served. Consulted for
    /// every message: `@exclusivity(unchecked)` like `instances`.
    @exclusivity(unchecked) var core: WorkerCore
    /// Looked up for every event: `@exclusivity(unchecked)` (the runtime's per-access bookkeeping
    /// cost time on each). Safe because nothing touches it while it is being modified: it is
    /// only read, assigned, or iterated over a copy.
    @exclusivity(unchecked) var instances: [String: any HostedMachine] = [:]
    /// The resting states of the instances of machines that keep nothing and passivate, by
    /// machine name (``StateTable``): an instance is in `instances` or here, never both.
    /// Looked up for every event while not empty: `@exclusivity(unchecked)` like `instances`.
    @exclusivity(unchecked) var stateTables: [String: any AnyStateTable] = [:] {
        didSet { lastStateTable = nil }
    }
    /// The flight recorder once it opened, as `poison.recorder` (behind a lock) holds it: read
    /// per event of a resting instance.
    @exclusivity(unchecked) var flightRecorder: FlightRecorder?
    /// The table of ``resting`` found last, by its machine's name: a keyed machine's events come
    /// in runs, and each was a lookup by the name.
    @exclusivity(unchecked) var lastStateTable: (name: String, table: any AnyStateTable)?
    /// The tasks running io requests for other workers' machines, by call id: what to cancel
    /// when the core says so.
    var serving: [UInt64: Task<Void, Never>] = [:]
    /// The io calls of this worker's machines running on its own handlers, by the call id the
    /// core gave each: the task to cancel and the machine to answer on a timeout
    /// (`WorkerRuntime+LocalIO.swift`).
    var localWaiters: [UInt64: LocalWaiter] = [:]
    /// Opens this worker's store, the first time a welcome places a durable machine here.
    let openStore: (@Sendable (SharedStore?) throws(StoreError) -> any MachineStore)?
    /// Where durable instances are written; nil until a durable machine is placed here.
    var store: (any MachineStore)?
    /// The stored instances still to bring back after the store opened. Asked after every
    /// event of a batch whether the turn is over (``Recovery/turnIsOver(now:)``):
    /// `@exclusivity(unchecked)` like `instances`, for the same reason; it is only read or
    /// changed in place, never while another access to it is open.
    @exclusivity(unchecked) var recovery = Recovery()
    /// How long one turn may bring stored instances back (``Recovery/turn``; tests shorten it).
    let recoveryTurn: Duration
    /// Received messages not yet decided: a turn that spent ``Recovery/turn`` bringing
    /// instances back on demand leaves the rest of its batch for the next turn.
    var parked = ParkedInbound()
    /// Opens this worker's flight recorder when it starts (poison events); nil: none.
    let openRecorder: (@Sendable () throws(StoreError) -> FlightRecorder)?
    /// The wall clock: what the machines' timers run on, and what stamps journal entries,
    /// crash counts, dead letters and audit lines (``wallMs``), so a test can fix the time.
    let clock: any HostClock
    /// Ends the process with the reason's status (`exit`); tests keep the reason instead.
    private let end: @Sendable (WorkerExitReason) -> Void
    /// The event the last process under this name died running, as the flight recorder kept
    /// it: reported with the registration, then counted against the event in the store once the
    /// store opens (durable machines).
    var unfinishedRun: RecordedRun?
    /// What passivation did since its last log line (``Passivation/line(_:written:dropped:live:waiting:now:)``).
    var passivationTally = Passivation.Tally()
    /// The one timer on ``clock`` that wakes passivated instances for their timers, and when.
    var scheduledWake: (at: Timestamp, timer: any ScheduledTimer)?
    /// The keyed instances the store may hold a record of, for the machines it covers: a fresh
    /// key of a passivating machine starts without a store read (``restorePassivated(_:)``).
    var storedKeys = StoredKeys()
    /// Durable instances whose stored record or journal does not read, with the error every
    /// request to them is answered with (``refuseUnreadable(_:why:)``): never started afresh
    /// over what they acknowledged.
    var unreadable: [String: WireError] = [:]
    /// `release` messages of this turn, carried out once it has drained and committed
    /// (``releaseAfterCommit()``), with the name they were addressed to.
    var releases: [(release: HandoffRelease, address: String)] = []
    /// What the io performers of its instances share (``sharedIO()``), made again when a
    /// welcome places other io elsewhere.
    var clusterIO: ClusterIO?

    /// The I/O loop's thread: the runtime, its hosts and what they send share it, so a received
    /// batch is queued, drained and answered with no thread hand-off and no executor switch.
    /// In tests, a ``DrivenLoop`` the test runs. Read once: the link keeps the loop alive.
    nonisolated var unownedExecutor: UnownedSerialExecutor { executorReference }
    private nonisolated let executorReference: UnownedSerialExecutor

    /// - Parameters:
    ///   - coordinator: The coordinator's workers endpoint, for messages.
    ///   - reconnect: Replaces the DEALER with a new one connected to the coordinator.
    ///   - openStore: Opens the worker's store; nil when it has none (a durable machine placed
    ///     here is then refused).
    ///   - openRecorder: Opens the worker's flight recorder, when it starts; nil: poison events
    ///     are not caught, nor crashes attributed.
    ///   - recoveryTurn: How long one turn may bring stored instances back.
    ///   - clock: The wall clock: what the machines' timers run on, and what stamps journal
    ///     entries, crash counts, dead letters and audit lines; a test's (`TestClock`) in tests.
    ///   - end: Ends the process for a reason the runtime met (a store that fails, a
    ///     rejection); the process's `exit` with the reason's status unless a test says otherwise.
    init(configuration: WorkerConfiguration, link: WorkerLink, log: Logger, coordinator: String,
         reconnect: @escaping @Sendable () -> Void, openStore: (@Sendable (SharedStore?) throws(StoreError) -> any MachineStore)? = nil,
         openRecorder: (@Sendable () throws(StoreError) -> FlightRecorder)? = nil, recoveryTurn: Duration = Recovery.turn,
         clock: any HostClock = WallClock(),
         end: @escaping @Sendable (WorkerExitReason) -> Void = { exit($0.status.rawValue) }) {
        self.end = end
        self.clock = clock
        self.configuration = configuration
        self.recoveryTurn = recoveryTurn
        self.openStore = openStore
        self.openRecorder = openRecorder
        let turn = Turn(outbound: link.outbound, direct: link.direct), poison = PoisonWatch(), inlet = CoreInlet()
        (self.turn, self.poison, self.inlet) = (turn, poison, inlet)
        let wiring = HostWiring(link: link, turn: turn, poison: poison, inlet: inlet, clock: clock)
        self.factories = configuration.factories.mapValues { $0.bound(to: wiring) }
        self.link = link
        executorReference = link.loop.executor.asUnownedSerialExecutor()
        self.log = log
        tracing = WireTracing.bootstrapped(log: log)
        self.reconnect = reconnect
        core = WorkerCore(worker: link.worker, coordinator: coordinator, machineTypes: Set(configuration.machineTypes), now: .now)
        inlet.attach(self)
    }

    /// Registers with the coordinator.
    func start() {
        // A durable instance that changes outside a received batch (a timer, an io result) is
        // written in a turn of its own.
        let loop = link.loop
        turn.durable.onWriteNeeded { [weak self] in
            loop.spawn { [weak self] in await self?.commitTurn() }
        }
        // A host woken outside a batch (a timer, an effect's result, an instance starting) is
        // drained like a batch: its durable state is written before its replies leave.
        turn.woken.onWokenAlone { [weak self] target in
            loop.spawn { [weak self] in await self?.drainAlone(target) }
        }
        // Before the registration, which reports what the last process died running.
        openFlightRecorder()
        run(core.start())
    }

    /// Heartbeats, silence and reconnection (``WorkerCore/tick(now:)``).
    /// - Returns: How long until the next tick.
    func tick(now: ContinuousClock.Instant) -> Duration {
        settleEndings()
        run(core.tick(now: now))
        passivateIdle(now: now)
        return core.tickInterval
    }

    /// Milliseconds since 1970 on ``clock``: the one wall-clock read of the runtime's own.
    var wallMs: Int64 { clock.now().sinceEpoch.wholeMilliseconds }

    /// Something the runtime did failed: the core says what follows (``WorkerCore/failed(_:)``).
    func failed(_ failure: WorkerFailure) {
        run(core.failed(failure))
    }

    /// Executes what the session core decided.
    func run(_ actions: [WorkerAction]) {
        for action in actions {
            switch action {
            case .register:
                register()
            case .heartbeat:
                // With metrics on, what was counted since the last one rides along.
                link.send(.heartbeat, address: link.worker,
                          payload: link.metrics.takeReport(types: core.placed.mapValues(\.type),
                                                           depths: WorkerMetrics.depths(of: instances.values, types: core.placed.values.map(\.type))))
            case .reconnect:
                // What the old connection brought and was not decided goes with it: the
                // coordinator fails those requests when it loses the session.
                parked = ParkedInbound()
                reconnect()
            case .failRemoteCalls(let failure):
                let failed = failWaiters(failure)
                if failed > 0 { log.warning("failed \(failed) pending remote io call(s): \(failure.code)") }
            case .openOutflow:
                run(core.reopened(dropped: link.outflow.open()))
            case .closeOutflow:
                link.outflow.close()
                link.direct?.sessionEnded()
            case .adopt(let welcome, let dropping):
                adopt(welcome, dropping: dropping)
                link.direct?.welcomed(welcome)
            case .reportInstances:
                reportInstances()
            case .restartInstance(let address, let answering):
                restartInstance(address, answering: answering)
            case .removeInstance(let address):
                removeInstance(address)
            case .stopInstance(let address):
                stopInstance(address)
            case .timeOutLocalCalls(let timeouts):
                timeOut(timeouts)
            case .dropMoved(let addresses):
                dropMoved(addresses)
            case .checkOwnership:
                checkOwnership()
            case .log(let level, let text):
                log.log(level: level, "\(text)")
            case .exit(let reason):
                log.critical("\(reason.message)")
                end(reason)
            }
        }
    }

    private func register() {
        let registration = core.registration(pid: getpid(), ioHandlers: configuration.io.names.sorted(), direct: link.direct?.endpoint)
        guard let payload = try? WireJSON.encode(registration) else { return }
        link.send(.register, correlation: core.registrationCorrelation, address: link.worker, payload: payload)
    }

    /// Hosts what a welcome places here. After a re-registration (the coordinator restarted, or
    /// this worker was silent) the instances of machines still placed here as before are kept,
    /// state and all; those of `dropping` go.
    private func adopt(_ welcome: Welcome, dropping: Set<String>) {
        // Before anything this welcome lets out: the coordinator refuses larger frames.
        link.messageBytes = core.messageBytes
        link.batchEnvelopes = core.batchEnvelopes
        link.metrics.turn(on: welcome.metrics == true)
        if !dropping.isEmpty {
            // Iterates a copy (see `instances`).
            for address in Array(instances.keys) {
                if dropping.contains(MachineAddress.machine(of: address)) { instances[address] = nil }
            }
        }
        checkRouteEvents(welcome)
        adoptAudit(welcome)
        adoptPatterns(welcome.quarantined ?? [])
        adoptStateTables(welcome, dropping: dropping)
        if store == nil, welcome.machines.contains(where: { ($0.durability ?? .none) != .none }) {
            openStoreAndRecover(welcome)
        }
        // Single machines start now (those not kept), like children of a supervisor, so watchers
        // see their initial states. Keyed instances start with their first event.
        for machine in welcome.machines where !machine.keyed {
            _ = try? instance(for: machine.name)
        }
    }

    /// Adopts what a welcome says is audited, opening the log the first time: a log that
    /// cannot be opened is a failure for the core to rule on (``WorkerFailure/auditOpen(_:)``).
    func adoptAudit(_ welcome: Welcome) {
        do {
            try turn.audit.adopt(welcome.audit, worker: link.worker)
        } catch {
            failed(.auditOpen(error.message))
        }
    }

    /// Logs each route event that would not decode for its machine's type, with its place in the
    /// topology; the route itself still runs (and is refused, and logged, each time it fires).
    private func checkRouteEvents(_ welcome: Welcome) {
        for route in welcome.routeEvents ?? [] {
            guard let type = core.placed[route.machine]?.type, let factory = factories[type],
                  let problem = factory.check(event: Array(route.event.jsonData), address: route.machine) else { continue }
            log.error("topology \(route.path): the route's event for '\(route.machine)' (\(type)) does not decode: \(problem.message); fix \(route.path) in the topology file")
        }
    }

    func factory(for type: String) -> (any HostedMachineFactory)? { factories[type] }

    /// A new instance at `address`, continuing from `record` (and for `journal`, the entries of
    /// `journal` after it) when it has one.
    /// - Parameter startsNow: Whether a new one boots here (``Hosted``'s `startsNow`): a keyed
    ///   instance made for the event in hand.
    func make(_ address: String, _ machine: Welcome.HostedMachine, factory: any HostedMachineFactory, welcome: Welcome,
              record: MachineRecord?, journal: [JournalEntry] = [], startsNow: Bool = false,
              handover: (any TableHandover)? = nil) throws(WireError) -> any HostedMachine {
        let io = ClusterIOPerformer(address: address, shared: sharedIO())
        var durable: DurableStart?
        if let durability = machine.durability, durability != .none {
            guard store != nil else {
                throw WireError(.unknownMachine, "'\(address)' is durable (\(durability.rawValue)) but worker \(link.worker) has no store",
                                address: address)
            }
            durable = DurableStart(type: machine.type, durability: durability, record: record, journal: journal)
            // From now on it may be written: its key's next start reads the store.
            storedKeys.made(address, machine: machine.name)
        }
        // A resting machine's hosts are looked for only once it may have some.
        if !self.stateTables.isEmpty, let table = self.stateTables[machine.name], !table.mayHaveHosts { table.mayHaveHosts = true }
        let instance = try factory.make(address: address, type: machine.type, mailboxCapacity: welcome.mailboxCapacity, io: io,
                                        watched: observation.watches(stateOf: address), executor: link.loop.executor, durable: durable,
                                        startsNow: startsNow, handover: handover)
        // What is in flight as it starts is told first (``MachineHost/effects()``): it may begin after the host.
        if observation.watches(effectsOf: address) { instance.setEffectsWatched(true) }
        return instance
    }

    /// The ``ClusterIO`` of the instances made now: the last one made, unless the io placed on
    /// other workers changed since.
    func sharedIO() -> ClusterIO {
        if let clusterIO, clusterIO.remoteNames == core.remoteIO { return clusterIO }
        let made = ClusterIO(local: configuration.io, remoteNames: core.remoteIO, core: inlet, metrics: link.metrics, tracing: tracing)
        clusterIO = made
        return made
    }

    /// A get, stop, restart or cancel: queued on the machine like an event, so it keeps its
    /// place in the machine's FIFO and its reply comes in turn.
    func request(_ request: WorkerCore.MachineRequest, correlation: UInt64, address: String, payload: ArraySlice<UInt8>) {
        let link = link
        let answer = Self.stateAnswer(link, correlation: correlation, address: address)
        // A resting instance's state is read where it rests: no host made for a read.
        if case .state = request, let state = tableState(address) { return answer(state) }
        let instance: any HostedMachine
        do {
            instance = try self.instance(for: address, spawning: false)
        } catch {
            return link.send(WireMessage.error(error, correlation: correlation, address: address))
        }
        switch request {
        case .state:
            instance.state(reply: answer)
        case .stop:
            instance.stop(reply: answer)
        case .restart:
            restart(instance, correlation: correlation, address: address)
        case .cancel:
            instance.cancel(effect: Array(payload)) { error in
                if let error {
                    link.send(WireMessage.error(error, correlation: correlation, address: address))
                } else {
                    link.send(.accepted, correlation: correlation, address: address)
                }
            }
        }
    }

    /// Answers request `correlation` with a state (JSON) as `state`, or with why not as `error`.
    static func stateAnswer(_ link: WorkerLink, correlation: UInt64, address: String) -> @Sendable (Result<[UInt8], WireError>) -> Void {
        { state in
            switch state {
            case .success(let json): link.send(.state, correlation: correlation, address: address, payload: json)
            case .failure(let error): link.send(WireMessage.error(error, correlation: correlation, address: address))
            }
        }
    }
}
