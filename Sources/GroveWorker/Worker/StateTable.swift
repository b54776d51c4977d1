public import Grove
public import GroveCluster
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
// worker sees hosts only. Passivation drops idle entries as it drops idle hosts, walking each
// table in slot order instead of queueing each key.

/// The resting states of the instances of one machine of type `M` (see the top of the file).
///
/// What runs per event or per entry swept goes through closures of the type's ``HostedPath``
/// (``HostedPath/stateTable``), built where `M` is known: called from this generic class's
/// methods directly, each dictionary access looked up type metadata.
@usableFromInline
final class StateTable<M: Machine> {
    /// One instance at rest: its state, and what passivation judges it by.
    @usableFromInline
    struct Entry {
        @usableFromInline var state: M.State
        /// The passivation sweep under way when a message last reached it.
        @usableFromInline var touched: Int

        @inlinable
        init(state: M.State, touched: Int) {
            self.state = state
            self.touched = touched
        }
    }

    /// Where a host taking over starts: `state`, and for an event whose transition needs the
    /// host, what it committed there.
    @usableFromInline
    final class Start: TableHandover {
        @usableFromInline let state: M.State
        @usableFromInline let stepped: (state: M.State, effect: MachineEffect<M>, event: M.Event)?

        @inlinable
        init(state: M.State, stepped: (state: M.State, effect: MachineEffect<M>, event: M.Event)?) {
            self.state = state
            self.stepped = stepped
        }
    }

    /// Read and written per event, on the worker's loop only: `@exclusivity(unchecked)`, as the
    /// runtime's `instances` (each access paid a dynamic exclusivity check). An
    /// ``AddressTable``: a fresh key is hashed once, for its lookup and its entry, and the
    /// sweep walks the slots (``sweepSpecialized(_:idleThrough:slots:)``), where a dictionary
    /// and a queue per key hashed it four times and more.
    @usableFromInline @exclusivity(unchecked) var entries = AddressTable<Entry>()
    /// Where a key never seen starts.
    @usableFromInline let initial: M.State
    /// The type name the topology gives the machine, for the flight recorder.
    @usableFromInline let type: String
    @usableFromInline let path: HostedPath<M>
    var mayHaveHosts = false
    /// The passivation sweep whose walk of the table is under way or done, and the slots walked
    /// in it: one round of the table per sweep at most (``sweepSpecialized(_:idleThrough:slots:)``).
    @usableFromInline var walk: (sweep: Int, walked: Int) = (-1, 0)

    init(initial: M.State, type: String, path: HostedPath<M>) {
        self.initial = initial
        self.type = type
        self.path = path
    }
}

extension StateTable: AnyStateTable where M.State: Codable, M.Event: Codable, M.Output: Encodable {
    /// Whether instances of `M` starting at `initial` may rest here: a new one starts with no
    /// effect and not ended, and the type has no outputs (a host with outputs starts them in a
    /// task, so it could not take a transition over as it is made).
    static func admits(initial: M.State) -> Bool {
        guard M.Output.self == Never.self, !M.isTerminal(initial) else { return false }
        if case .none = M.startEffect(initial).kind { return true }
        return false
    }

    func run(_ event: TableEvent, fresh: Bool) -> TableOutcome {
        path.stateTable.run(self, event, fresh)
    }

    func sweep(_ sweep: Int, idleThrough: Int, slots: Int) -> (dropped: Int, walked: Int) {
        path.stateTable.sweep(self, sweep, idleThrough, slots)
    }

    func take(_ address: String) -> (any TableHandover)? {
        guard let entry = entries.removeValue(forKey: address) else { return nil }
        return Start(state: entry.state, stepped: nil)
    }

    func holds(_ address: String) -> Bool { entries.probe(address).found }

    func putBack(_ address: String, _ start: any TableHandover, touched: Int) {
        guard let start = start as? Start else { return }
        entries[address] = Entry(state: start.state, touched: touched)
    }

    func state(at address: String) -> Result<[UInt8], WireError>? {
        guard let entry = entries[address] else { return nil }
        return Hosted<M>.encode(entry.state, outcome: "the machine is running", address: address)
    }

    var count: Int { entries.count }

    var addresses: [String] { entries.addresses }

    func takeAll() -> [(address: String, start: any TableHandover)] {
        defer { entries.removeAll() }
        return entries.map { ($0.address, Start(state: $0.value.state, stepped: nil)) }
    }

    /// ``run(_:fresh:)`` where `M` is known (``HostedPath/stateTable``).
    @inlinable
    func runSpecialized(_ event: TableEvent, fresh: Bool) -> TableOutcome {
        // Looked up once: a key not held is added where the probe stopped (nothing changes
        // the table before then).
        let probe = entries.probe(event.address)
        if !probe.found, !fresh { return .absent }
        let state = probe.found ? entries[found: probe].state : initial
        let decoded: M.Event
        do {
            // The binary codec decoded here, specialized; JSON, and why an event does not
            // decode, as a host finds it.
            if event.binary, let quick = try? path.decodeBinary(event.payload), M.refusal(of: quick) == nil {
                decoded = quick
            } else {
                decoded = try StateTableRuns.decode(event.payload, binary: event.binary, address: event.address, path: path)
            }
        } catch {
            // A refused event counts as a message, as it does for a host.
            if probe.found {
                entries[found: probe].touched = event.sweep
            } else {
                entries.insert(Entry(state: state, touched: event.sweep), for: event.address, at: probe)
            }
            return .refused(error)
        }
        var next = state
        let recorder = event.recorder
        if let recorder {
            let encodeEvent = path.encodeEvent
            recorder.willRun(tableEvent: event, type: type) { encodeEvent(decoded, &$0) }
        }
        let effect = M.step(&next, event: decoded)
        recorder?.didRun()
        guard case .none = effect.kind, !M.isTerminal(next) else {
            if probe.found { entries.remove(at: probe) }
            return .needsHost(Start(state: state, stepped: (next, effect, decoded)))
        }
        if probe.found {
            entries[found: probe].state = next
            entries[found: probe].touched = event.sweep
        } else {
            entries.insert(Entry(state: next, touched: event.sweep), for: event.address, at: probe)
        }
        if let reply = event.reply { HostedPath<M>.answer(reply, with: .success(next), redacting: path.redacts) }
        return .ran
    }

    /// ``sweep(_:idleThrough:slots:)`` where `M` is known: at most `slots` more slots of the
    /// table walked, round it from where the last part stopped (``AddressTable/walk(slots:removing:)``),
    /// each entry last reached at sweep `idleThrough` or before dropped; at most one round per
    /// sweep. A table too large for one sweep's ticks goes on at the next from where it stopped,
    /// so every entry is reached within a round. A fresh key is neither queued for the sweep
    /// nor looked up by it.
    @inlinable
    func sweepSpecialized(_ sweep: Int, idleThrough: Int, slots: Int) -> (dropped: Int, walked: Int) {
        if walk.sweep != sweep { walk = (sweep, 0) }
        let budget = min(slots, entries.capacity - walk.walked)
        guard budget > 0 else { return (0, 0) }
        let (dropped, walked) = entries.walk(slots: budget) { $0.touched <= idleThrough }
        walk.walked += walked
        return (dropped, walked)
    }
}

/// The per-event and per-entry steps of ``StateTable``, made where the machine type is known
/// (``HostedPath``'s inlinable init), so specialized for it.
@usableFromInline
struct StateTablePath<M: Machine>: Sendable {
    @usableFromInline let run: @Sendable (StateTable<M>, TableEvent, Bool) -> TableOutcome
    @usableFromInline let sweep: @Sendable (StateTable<M>, Int, Int, Int) -> (dropped: Int, walked: Int)

    @inlinable
    init() where M.State: Codable, M.Event: Codable, M.Output: Encodable {
        run = { table, event, fresh in table.runSpecialized(event, fresh: fresh) }
        sweep = { table, sweep, idleThrough, slots in table.sweepSpecialized(sweep, idleThrough: idleThrough, slots: slots) }
    }
}

/// What ``StateTable`` calls that need not be specialized.
@usableFromInline
enum StateTableRuns {
    /// An event in either codec that its machine accepts, as a host decodes and checks it
    /// (``Hosted/decodeEvent(_:binary:)``); pattern quarantine aside, which the runtime checks
    /// before it sends an event here.
    @usableFromInline
    static func decode<M: Machine>(_ payload: ArraySlice<UInt8>, binary: Bool, address: String,
                                   path: HostedPath<M>) throws(WireError) -> M.Event
    where M.State: Codable, M.Event: Codable, M.Output: Encodable {
        let event = binary ? try Hosted<M>.decodeBinaryEvent(payload, address: address, path: path)
                           : try Hosted<M>.decodeEvent(payload, address: address)
        try Hosted<M>.check(event, address: address)
        return event
    }
}
