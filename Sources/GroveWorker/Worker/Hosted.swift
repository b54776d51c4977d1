import Foundation
import Grove
import GroveCluster
import GroveRuntime
import GroveWire
import Synchronization

final class Hosted<M: Machine>: HostedMachine where M.State: Codable, M.Event: Codable, M.Output: Encodable {
    // What every event reads first, in one cache line.
    let host: MachineHost<M>
    let path: HostedPath<M>
    /// Whether the host runs on an executor given to it (a worker's loop), on which its events
    /// arrive: an event that finds the host idle is then handled at once instead of queued.
    let handlesOnArrival: Bool
    /// The worker's flight recorder, while recording is on: an event run on arrival is noted
    /// as the bytes received, with the id of the request that carried them.
    let recorder: FlightRecorder?
    let address: String
    /// Where its replies, state changes and end go.
    let link: WorkerLink
    /// What it notes for the turn to settle: its wake-ups, its durable changes, its end.
    let turn: Turn
    /// The quarantined events it refuses, and the flight recorder its events are noted in.
    let poison: PoisonWatch
    /// The way into the worker's core for its outputs.
    let inlet: CoreInlet
    let durability: Durability
    /// The type name the topology gives it, for its record, the flight recorder and the
    /// quarantined patterns.
    let type: String
    let eventCounts: MachineEventCounts
    /// Set when a durable instance changed and is not written yet: it joins the turn's durable
    /// writes once per write, not once per event.
    let unwritten = Atomic<Bool>(false)
    /// Where a `journal` instance's journal stands; nil for the other levels.
    let journal: JournalTail?
    let drainTarget: HostDrain
    /// The idempotency keys it answered lately (``AnswerWindow``); nil until its first keyed
    /// event, so an instance that never gets one pays a word and a lock for it.
    let answers = Mutex<AnswerBook?>(nil)
    /// Set when it came back from its store, whose kept answers are read at its first keyed
    /// event (``AnswerKeeper/answersUnread()``), not as it comes back: a worker recovering
    /// 100,000 instances reads no answers for those that get no repeat.
    let storedAnswers = Atomic<Bool>(false)
    /// The passivation sweep under way when a message last reached it.
    private let touched = Atomic<Int>(0)
    /// The sweep it is queued to be judged at; read and written on the worker's loop only.
    private let judgedAt = Atomic<Int>(-1)
    /// Set for a restored durable instance whose first drain only boots it: that drain is not a
    /// change to write (``drained(_:)``).
    let firstDrainOnlyBoots = Atomic<Bool>(false)
    /// Publishes state changes while someone watches `state:<address>`. Not observing otherwise
    /// keeps the host on its fast path (no observer to notify per commit).
    private let publisher = Mutex<Task<Void, Never>?>(nil)
    /// Publishes the work in flight while someone watches `effect:<address>`
    /// (`Hosted+Effects.swift`); not watching, the host tells nobody.
    let effectPublisher = Mutex<Task<Void, Never>?>(nil)
    /// The io requests the topology places on other workers: the coordinator publishes those
    /// calls, so this instance does not.
    let remoteIO: Set<String>

    typealias EndHandler = @Sendable (_ address: String, Result<Termination<M>, HostError>) -> Void

    /// - Parameters:
    ///   - executor: The executor the host runs on: a worker's loop. With one, ``send`` and
    ///     ``enqueue`` must be called on it (the worker runtime, which shares it, does), since an
    ///     event that finds the host idle is handled right there. Without one the host runs on an
    ///     actor of its own and events are always queued.
    ///   - link: Where its replies, state changes and end go.
    ///   - turn: The worker's turn, which drains the host, writes its durable changes and
    ///     settles its end.
    ///   - poison: The quarantined events it refuses, and the flight recorder (the worker's).
    ///   - inlet: The way into the worker's core, for its outputs.
    ///   - watched: Whether a watcher of `state:<address>` is subscribed as it starts.
    ///   - clock: What its timers run on: the wall clock, or a test's.
    ///   - replyHandler: How the host answers queued senders that wait: `path`'s handler bound
    ///     to `link`, which a worker makes once per machine type and shares between its hosts;
    ///     one of the host's own when `nil`.
    ///   - endHandler: What the host does when it ends (``ending(durability:link:turn:)``)
    ///     for `durability`, which a worker makes once per machine type and shares between its
    ///     hosts; one of the host's own when `nil`.
    ///   - recording: What its host calls around each event for the flight recorder (`poison`'s),
    ///     made once per machine type by the worker (``SharedRecordings``); one of the host's
    ///     own when `nil`.
    ///   - initialState: Where a new instance starts, when its registration says (a reducer's
    ///     initial state); `M.initialState` otherwise.
    ///   - type: The type name the topology gives the machine.
    ///   - durability: What the store keeps of it (`.none`: nothing).
    ///   - restoring: The snapshot a durable instance continues from; nil for a new one.
    ///   - cursor: Where a `journal` instance's journal stands; nil for a new one.
    ///   - startsNow: Whether a new instance with an executor starts and boots here, on it
    ///     (the caller runs there: a worker making a keyed instance for its first event), so
    ///     that event finds it idle and runs at once, with no drain to schedule.
    ///   - resumes: Whether it continues, at `initialState`, an instance that rested as its
    ///     state alone (``StateTable``): its start effect ran, if it had one, when it began.
    init(address: String, env: M.Env, path: HostedPath<M>, mailboxCapacity: Int, io: any IOPerformer, link: WorkerLink,
         turn: Turn, poison: PoisonWatch = PoisonWatch(), inlet: CoreInlet = CoreInlet(), watched: Bool = false,
         clock: any HostClock = WallClock(),
         executor: (any SerialExecutor)? = nil, replyHandler: HostedPath<M>.ReplyHandler? = nil, endHandler: EndHandler? = nil,
         recording: RunRecorder<M>? = nil, initialState: M.State? = nil,
         type: String = "", durability: Durability = .none, restoring: Snapshot<M>? = nil, cursor: JournalCursor? = nil,
         startsNow: Bool = false, resumes: Bool = false) {
        // Durability, snapshot and cursor apart, not an optional tuple of them: in this generic
        // code a tuple's metadata is built, and its copies go through value witnesses, per
        // instance.
        self.address = address
        self.path = path
        self.link = link
        self.turn = turn
        self.poison = poison
        self.inlet = inlet
        self.type = type
        eventCounts = link.metrics.eventCounts(ofMachine: MachineAddress.machine(of: address))
        self.durability = durability
        let journal = durability == .journal ? JournalTail(cursor ?? JournalCursor()) : nil
        self.journal = journal
        remoteIO = (io as? ClusterIOPerformer)?.remoteNames ?? []
        // Given its address: the default, the type's name, is found by reflection (`Mirror`),
        // 3 % of a worker spawning fresh keys.
        var options = HostOptions<M>(address: address)
        options.mailboxCapacity = mailboxCapacity
        options.executor = executor
        // A durable machine's snapshots carry the io its request types re-issue.
        options.reissuesIO = durability != .none
        options.resumes = resumes
        handlesOnArrival = executor != nil
        // On a test's driven loop, io calls into the worker start there too (``WorkerLoop/spawn(_:)``).
        if case .driven(let loop) = link.loop { options.ioExecutor = loop }
        let drainTarget = HostDrain(address: address, drainer: path.drainer, woken: turn.woken)
        self.drainTarget = drainTarget
        // The target alone captured: its reference is the closure's context, no box per instance.
        options.drainScheduler = { drainTarget.schedule() }
        // Events whose senders wait are answered through one handler, with the reply's
        // correlation and codec in a token, instead of a closure per event.
        if let replyHandler {
            options.replyHandler = replyHandler
        } else {
            options.replyHandler = path.replyHandler(link)
        }
        options.trace = AuditTrail<M>.handler(for: address, worker: link.worker, sink: turn.audit, clock: clock, initial: restoring?.state ?? initialState ?? M.initialState)
        if let endHandler {
            options.onEndAt = endHandler
        } else {
            options.onEndAt = Self.ending(durability: durability, link: link, turn: turn)
        }
        // Every machine's events, durable or not: a crash is attributed to the event that
        // caused it, and to its sender, whatever the machine keeps.
        let recorder = poison.recorder
        self.recorder = recorder
        if let journal {
            options.recorder = Self.journaling(address, type: type, into: journal, flight: recorder, path: path)
        } else if let recorder {
            options.recorder = recording ?? Self.recording(type: type, in: recorder, path: path)
        }
        // With metrics on, each transition is timed for its type's histogram (two clock reads,
        // a lock and an add); off, the host has no more to call than before.
        if let clock = link.metrics.transitionClock(type: type.isEmpty ? "\(M.self)" : type) {
            options.recorder = Self.timing(options.recorder, on: clock)
        }
        host = path.makeHost(env, restoring?.state ?? initialState, io, clock, options, restoring)
        drainTarget.attach(host)
        // Not called for a new instance: in this generic code the call looked up the optional
        // snapshot's metadata again (1.6 % of a worker spawning fresh keys).
        let restored = restoring != nil
        if durability != .none, restored { noteChangesAfterDrains(restoring: restoring) }
        start(watched: watched, now: startsNow && executor != nil && !restored)
    }

    deinit {
        drainTarget.detach()
    }

    var queuedEventCount: Int { host.queuedEventCount }

    var touchedSweep: Int { touched.load(ordering: .relaxed) }

    @inline(__always)
    func touch(_ sweep: Int) { touched.store(sweep, ordering: .relaxed) }

    var judgedAtSweep: Int { judgedAt.load(ordering: .relaxed) }

    func judge(atSweep sweep: Int) { judgedAt.store(sweep, ordering: .relaxed) }

    var resting: Resting { handlesOnArrival ? path.resting(host) : .busy }

    func passivate() {
        guard handlesOnArrival else { return }
        path.passivate(host)
        publisher.withLock { $0?.cancel(); $0 = nil }
        // Not cancelled: it publishes the `passivated` ends the host just told, then its
        // stream finishes.
        effectPublisher.withLock { $0 = nil }
        drainTarget.detach()
    }

    var hasEnded: Bool {
        // A host with no executor of its own runs on its actor: not read from outside. Every
        // host a worker makes runs on the worker's loop.
        handlesOnArrival ? host.onOwnExecutor(with: ()) { host, _ in host.hasEnded } : false
    }

    func setWatched(_ watched: Bool) {
        publisher.withLock { task in
            if watched, task == nil {
                let host = host
                task = link.loop.spawn { await self.publish(await host.states()) }
            } else if !watched, let running = task {
                running.cancel() // ends the stream's iteration; the host drops the observer
                task = nil
            }
        }
    }

    /// Publishes `states` unless a publication already runs (``setWatched(_:)`` may have
    /// started one while the host was starting).
    func publish(from states: AsyncStream<M.State>) {
        publisher.withLock { task in
            if task == nil { task = link.loop.spawn { await self.publish(states) } }
        }
    }

    private func publish(_ states: AsyncStream<M.State>) async {
        // The StateChange payload with the state's own JSON spliced in: no re-parsing.
        let opening = Array(#"{"address":\#(JSONValue.string(address)),"worker":\#(JSONValue.string(link.worker)),"state":"#.utf8)
        for await state in states {
            guard let json = try? WireJSON.encode(HostedPath<M>.shown(state)) else { continue }
            link.send(.stateChanged, address: address, payload: opening + json + [UInt8(ascii: "}")])
        }
    }

    func writeRecordNext() {
        guard let journal else { return }
        journal.recordNext()
        changed()
    }

    func state(reply: @escaping @Sendable (Result<[UInt8], WireError>) -> Void) {
        let address = address
        host.requestState { reply(Self.encode($0, outcome: "the machine is running", address: address)) }
    }

    /// A state as JSON for a reply (redacted when it has secrets), or why it does not encode.
    static func encode(_ state: M.State, outcome: String, address: String) -> Result<[UInt8], WireError> {
        do {
            return .success(try WireJSON.encode(HostedPath<M>.shown(state)))
        } catch {
            return .failure(.unencodableState(error, type: M.State.self, binary: false, outcome: outcome, address: address))
        }
    }

    func cancel(effect payload: [UInt8], done: @escaping @Sendable (WireError?) -> Void) {
        let id: EffectID
        do {
            id = try WireJSON.decode(EffectID.self, from: payload, what: "the effect id")
        } catch {
            host.requestAnswer { done(error) }
            return
        }
        host.requestCancel(id) { done(nil) }
    }

    func stop(reply: @escaping @Sendable (Result<[UInt8], WireError>) -> Void) {
        let address = address
        host.requestStop { reply(Self.encode($0, outcome: "the machine stopped", address: address)) }
    }
}
