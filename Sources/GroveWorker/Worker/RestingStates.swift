public import Grove
import GroveCluster
import GroveRuntime
public import GroveWire

// Resting instances kept as their state alone (issue 37). A keyed machine that passivates and
// keeps nothing in a store spends most of its instances' lives between one event and leaving
// memory: a million keys addressed once each made a million hosts, each set up (its mailbox,
// drain target, options) and torn down for one transition that returned no effect. Its resting
// instances are kept here instead, as `[address: state]`; an event whose transition returns no
// effect (the common case) commits to the table, and the first one that needs more (an effect,
// a terminal state) gets a host made from the state it ran on, which takes the transition over
// (``MachineHost/takeOverNow(_:effect:after:answering:)``): `update` runs once either way.
// Anything else that reaches such an instance (a read, a stop, a watcher, an idempotency key)
// first moves it to a host (``WorkerRuntime/instance(for:spawning:)``), so the rest of the
// worker sees hosts only. Passivation drops idle entries as it drops idle hosts.

/// The resting states of one machine's instances on this worker (``RestingStates``), as the
/// runtime sees them: not generic, so that it holds one per machine.
protocol RestingTable: AnyObject {
    /// Runs an event on the state of `event.address`: see ``RestingOutcome``. With `fresh`,
    /// an address with no entry starts one at the initial state, to be judged at sweep
    /// `event.judgedAt` (the caller queues it there unless it needs a host); without, such an
    /// address is ``RestingOutcome/absent`` (it may be a host's).
    func run(_ event: RestingEvent, fresh: Bool) -> RestingOutcome
    /// The entry at `address` leaves the table for a host that starts at its state; nil when
    /// there is none.
    func take(_ address: String) -> (any RestingStart)?
    /// Puts back what ``take(_:)`` or a ``RestingOutcome/needsHost(_:)`` took out, at the state
    /// it was taken at, when no host could be made for it: reached at sweep `touched`, to be
    /// judged at sweep `judgedAt`.
    func putBack(_ address: String, _ start: any RestingStart, touched: Int, judgedAt: Int)
    /// The state at `address` as JSON for a `get` (redacted when it has secrets), or why it
    /// does not encode; nil when there is no entry.
    func state(at address: String) -> Result<[UInt8], WireError>?
    /// Judges the entry at `address` in passivation sweep `sweep` (``Passivation``): dropped
    /// when last reached at sweep `idleThrough` or before.
    func judge(_ address: String, sweep: Int, full: Bool, idleThrough: Int) -> RestingJudgement
    /// The entry at `address` was queued again, for sweep `sweep`.
    func judged(_ address: String, atSweep sweep: Int)
    /// Whether an instance of the machine may be a host (in the runtime's `instances`): set
    /// when one is made, never cleared. While false, an address with no entry is new.
    var mayHaveHosts: Bool { get set }
    /// Whether an entry is at `address`.
    func holds(_ address: String) -> Bool
    var count: Int { get }
    var addresses: [String] { get }
    /// Empties the table: the states that were in it, to start hosts from.
    func takeAll() -> [(address: String, start: any RestingStart)]
}

/// Where a host taking over a resting instance starts (``RestingStates/Start``): not generic,
/// so the runtime passes it to the machine's factory, which knows its type.
@usableFromInline
protocol RestingStart: AnyObject {}

/// One event for a resting instance.
@usableFromInline
struct RestingEvent {
    @usableFromInline let address: String
    @usableFromInline let payload: ArraySlice<UInt8>
    @usableFromInline let binary: Bool
    @usableFromInline let correlation: UInt64
    /// Where its sender waits; nil for a no-wait event (answered `accepted` by the runtime).
    @usableFromInline let reply: StateReply?
    /// The passivation sweep under way: what the entry notes as its last message.
    @usableFromInline let sweep: Int
    /// The sweep a new entry is queued to be judged at.
    @usableFromInline var judgedAt: Int
    /// The worker's flight recorder: the event is noted before `update` runs, as a host notes
    /// it, so a crash in `update` is attributed to it.
    @usableFromInline let recorder: FlightRecorder?

    init(address: String, payload: ArraySlice<UInt8>, binary: Bool, correlation: UInt64, reply: StateReply?, sweep: Int,
         judgedAt: Int, recorder: FlightRecorder?) {
        self.judgedAt = judgedAt
        self.address = address
        self.payload = payload
        self.binary = binary
        self.correlation = correlation
        self.reply = reply
        self.sweep = sweep
        self.recorder = recorder
    }
}

/// What became of an event for a resting instance.
@usableFromInline
enum RestingOutcome {
    /// Its transition returned no effect and was committed in the table; a sender that waits
    /// was answered.
    case ran
    /// It did not decode, or the machine refuses it: nothing ran. A key never seen is entered
    /// at its initial state anyway, as a host is made for such an event.
    case refused(WireError)
    /// Its transition needs a host: the entry left the table, and a host made from `start`
    /// takes the transition over (``Hosted/takeOver(_:reply:)``).
    case needsHost(any RestingStart)
    /// No entry there, and it was not to start one: nothing ran.
    case absent
}

/// What a sweep did with one address (``RestingTable/judge(_:sweep:full:idleThrough:)``).
@usableFromInline
enum RestingJudgement {
    /// No entry there: the address is a host's, if anything's.
    case absent
    /// Kept: a stale entry of the sweep's queue (queued again since).
    case kept
    /// Kept, reached at sweep `touched`, since it was queued: to queue again
    /// (``RestingTable/judged(_:atSweep:)``).
    case reached(touched: Int)
    /// Idle long enough: dropped, state and all, as a passivated non-durable host is.
    case dropped
}

/// The resting states of the instances of one machine of type `M` (see the top of the file).
///
/// What runs per event or per entry swept goes through closures of the type's ``HostedPath``
/// (``HostedPath/restingStates``), built where `M` is known: called from this generic class's
/// methods directly, each dictionary access looked up type metadata.
@usableFromInline
final class RestingStates<M: Machine> {
    @usableFromInline
    struct Entry {
        @usableFromInline var state: M.State
        /// The passivation sweep under way when a message last reached it.
        @usableFromInline var touched: Int
        /// The sweep it is queued to be judged at: an entry of another sweep's queue is stale.
        @usableFromInline var judgedAt: Int

        @inlinable
        init(state: M.State, touched: Int, judgedAt: Int) {
            self.state = state
            self.touched = touched
            self.judgedAt = judgedAt
        }
    }

    /// Where a host taking over starts: `state`, and for an event whose transition needs the
    /// host, what it committed there.
    @usableFromInline
    final class Start: RestingStart {
        @usableFromInline let state: M.State
        @usableFromInline let stepped: (state: M.State, effect: MachineEffect<M>, event: M.Event)?

        @inlinable
        init(state: M.State, stepped: (state: M.State, effect: MachineEffect<M>, event: M.Event)?) {
            self.state = state
            self.stepped = stepped
        }
    }

    /// Read and written per event, on the worker's loop only: `@exclusivity(unchecked)`, as the
    /// runtime's `instances` (each access paid a dynamic exclusivity check).
    @usableFromInline @exclusivity(unchecked) var entries: [String: Entry] = [:]
    /// Where a key never seen starts.
    @usableFromInline let initial: M.State
    /// The type name the topology gives the machine, for the flight recorder.
    @usableFromInline let type: String
    @usableFromInline let path: HostedPath<M>
    var mayHaveHosts = false

    init(initial: M.State, type: String, path: HostedPath<M>) {
        self.initial = initial
        self.type = type
        self.path = path
    }
}

extension RestingStates: RestingTable where M.State: Codable, M.Event: Codable, M.Output: Encodable {
    /// Whether instances of `M` starting at `initial` may rest here: a new one starts with no
    /// effect and not ended, and the type has no outputs (a host with outputs starts them in a
    /// task, so it could not take a transition over as it is made).
    static func admits(initial: M.State) -> Bool {
        guard M.Output.self == Never.self, !M.isTerminal(initial) else { return false }
        if case .none = M.startEffect(initial).kind { return true }
        return false
    }

    func run(_ event: RestingEvent, fresh: Bool) -> RestingOutcome {
        path.restingStates.run(self, event, fresh)
    }

    func judge(_ address: String, sweep: Int, full: Bool, idleThrough: Int) -> RestingJudgement {
        path.restingStates.judge(self, address, sweep, full, idleThrough)
    }

    func judged(_ address: String, atSweep sweep: Int) {
        path.restingStates.judged(self, address, sweep)
    }

    func take(_ address: String) -> (any RestingStart)? {
        guard let entry = entries.removeValue(forKey: address) else { return nil }
        return Start(state: entry.state, stepped: nil)
    }

    func holds(_ address: String) -> Bool { entries[address] != nil }

    func putBack(_ address: String, _ start: any RestingStart, touched: Int, judgedAt: Int) {
        guard let start = start as? Start else { return }
        entries[address] = Entry(state: start.state, touched: touched, judgedAt: judgedAt)
    }

    func state(at address: String) -> Result<[UInt8], WireError>? {
        guard let entry = entries[address] else { return nil }
        return Hosted<M>.encode(entry.state, outcome: "the machine is running", address: address)
    }

    var count: Int { entries.count }

    var addresses: [String] { Array(entries.keys) }

    func takeAll() -> [(address: String, start: any RestingStart)] {
        defer { entries = [:] }
        return entries.map { ($0.key, Start(state: $0.value.state, stepped: nil)) }
    }

    /// ``run(_:fresh:)`` where `M` is known (``HostedPath/restingStates``).
    @inlinable
    func runSpecialized(_ event: RestingEvent, fresh: Bool) -> RestingOutcome {
        let index = entries.index(forKey: event.address)
        if index == nil, !fresh { return .absent }
        let state = index.map { entries.values[$0].state } ?? initial
        let decoded: M.Event
        do {
            // The binary codec decoded here, specialized; JSON, and why an event does not
            // decode, as a host finds it.
            if event.binary, let quick = try? path.decodeBinary(event.payload), M.refusal(of: quick) == nil {
                decoded = quick
            } else {
                decoded = try RestingRuns.decode(event.payload, binary: event.binary, address: event.address, path: path)
            }
        } catch {
            // A refused event counts as a message, as it does for a host.
            if let index {
                entries.values[index].touched = event.sweep
            } else {
                entries[event.address] = Entry(state: state, touched: event.sweep, judgedAt: event.judgedAt)
            }
            return .refused(error)
        }
        var next = state
        let recorder = event.recorder
        if let recorder {
            let encodeEvent = path.encodeEvent
            recorder.willRun(resting: event, type: type) { encodeEvent(decoded, &$0) }
        }
        let effect = M.step(&next, event: decoded)
        recorder?.didRun()
        guard case .none = effect.kind, !M.isTerminal(next) else {
            if let index { entries.remove(at: index) }
            return .needsHost(Start(state: state, stepped: (next, effect, decoded)))
        }
        if let index {
            entries.values[index] = Entry(state: next, touched: event.sweep, judgedAt: entries.values[index].judgedAt)
        } else {
            entries[event.address] = Entry(state: next, touched: event.sweep, judgedAt: event.judgedAt)
        }
        if let reply = event.reply { HostedPath<M>.answer(reply, with: .success(next), redacting: path.redacts) }
        return .ran
    }

    /// ``judge(_:sweep:full:idleThrough:)`` where `M` is known.
    @inlinable
    func judgeSpecialized(_ address: String, sweep: Int, full: Bool, idleThrough: Int) -> RestingJudgement {
        guard let index = entries.index(forKey: address) else { return .absent }
        let entry = entries.values[index]
        guard full || entry.judgedAt == sweep else { return .kept }
        if entry.touched <= idleThrough {
            entries.remove(at: index)
            return .dropped
        }
        return .reached(touched: entry.touched)
    }

    /// ``judged(_:atSweep:)`` where `M` is known.
    @inlinable
    func judgedSpecialized(_ address: String, atSweep sweep: Int) {
        guard let index = entries.index(forKey: address) else { return }
        entries.values[index].judgedAt = sweep
    }
}

/// The per-event and per-entry steps of ``RestingStates``, made where the machine type is known
/// (``HostedPath``'s inlinable init), so specialized for it.
@usableFromInline
struct RestingPath<M: Machine>: Sendable {
    @usableFromInline let run: @Sendable (RestingStates<M>, RestingEvent, Bool) -> RestingOutcome
    @usableFromInline let judge: @Sendable (RestingStates<M>, String, Int, Bool, Int) -> RestingJudgement
    @usableFromInline let judged: @Sendable (RestingStates<M>, String, Int) -> Void

    @inlinable
    init() where M.State: Codable, M.Event: Codable, M.Output: Encodable {
        run = { table, event, fresh in table.runSpecialized(event, fresh: fresh) }
        judge = { table, address, sweep, full, idleThrough in
            table.judgeSpecialized(address, sweep: sweep, full: full, idleThrough: idleThrough)
        }
        judged = { table, address, sweep in table.judgedSpecialized(address, atSweep: sweep) }
    }
}

/// What ``RestingStates`` calls that need not be specialized.
@usableFromInline
enum RestingRuns {
    /// An event in either codec that its machine accepts, as a host decodes and checks it
    /// (``Hosted/decodeEvent(_:binary:)``); pattern quarantine aside, which the runtime checks
    /// before it sends an event here.
    @usableFromInline
    static func decode<M: Machine>(_ payload: ArraySlice<UInt8>, binary: Bool, address: String,
                                   path: HostedPath<M>) throws(WireError) -> M.Event
    where M.State: Codable, M.Event: Codable, M.Output: Encodable {
        let event: M.Event
        if binary {
            do {
                event = try path.decodeBinary(payload)
            } catch {
                throw WireError(.undecodableEvent, "the binary event does not decode as \(M.self).Event: \(error.message)",
                                address: address, path: error.path)
            }
        } else {
            event = try Hosted<M>.decodeEvent(payload, address: address)
        }
        try Hosted<M>.check(event, address: address)
        return event
    }
}

extension Hosted {
    func takeOver(_ start: any RestingStart, reply: StateReply?) -> WireError? {
        guard let stepped = (start as? RestingStates<M>.Start)?.stepped else {
            preconditionFailure("\(address) was given a transition of another machine type to take over")
        }
        let redacts = path.redacts
        let taken = host.onOwnExecutor { host in
            host.takeOverNow(stepped.state, effect: stepped.effect, after: stepped.event, answering: reply.map { reply in
                { result, unhandled in HostedPath<M>.answer(reply, with: result, unhandled: unhandled, redacting: redacts) }
            })
        }
        // Made for it on this loop and booted (a resting machine starts with no effect), it is
        // idle. Were it not, the event is queued on the state it ran on instead, and runs again
        // from there: `update` is pure, so it commits the same.
        if !taken {
            do {
                if let reply {
                    try host.send(stepped.event) { HostedPath<M>.answer(reply, with: $0, unhandled: $1, redacting: redacts) }
                } else {
                    try host.send(stepped.event)
                }
            } catch {
                let refusal = WireError(refusal: error, address: address)
                guard let reply else { return refusal }
                reply.fail(refusal)
                return nil
            }
        }
        changed()
        return nil
    }
}
