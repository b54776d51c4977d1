public import Grove
import GroveCheck
public import GroveRuntime
import GroveWire

/// What a worker process can host: machine types by name, and io handlers.
///
/// Build your own worker executable by registering your machines and handlers, then calling
/// ``Worker/main(_:)``; point a topology's worker group at it with `"executable"`:
/// ```swift
/// @main enum MyWorker {
///     static func main() async {
///         var worker = WorkerConfiguration()
///         worker.register(Checkout.self)                       // hosted as type "Checkout"
///         worker.io.register(ChargeCard.self) { try await payments.charge($0) }
///         await Worker.main(worker)                           // reads --name and --coordinator
///     }
/// }
/// ```
public struct WorkerConfiguration: Sendable {
    /// Handlers for io requests this worker runs, for its own machines and for other workers'.
    public var io = IOHandlers()
    var factories: [String: any HostedMachineFactory] = [:]
    /// The machines `--describe` answers for, by name: each walks its graph to a limit of states
    /// (``checkable(_:as:)``).
    var descriptions: [String: @Sendable (_ limit: Int) async -> StateGraph] = [:]

    /// An empty configuration.
    public init() {}

    /// The machine type names registered so far.
    public var machineTypes: [String] { factories.keys.sorted() }

    /// Registers a machine type under `name`, with the environment its instances get.
    /// - Parameters:
    ///   - machine: The machine type. Its state and events cross processes as JSON.
    ///   - name: The type name topologies use in `machines[].type`; defaults to the type's name.
    ///   - env: Dependencies for the machine's local effects.
    @inlinable
    public mutating func register<M: Machine>(_ machine: M.Type, as name: String? = nil, env: M.Env)
    where M.State: Codable, M.Event: Codable, M.Output: Encodable {
        add(name ?? String(describing: M.self), env: env, path: HostedPath<M>())
    }

    @usableFromInline
    mutating func add<M: Machine>(_ name: String, env: M.Env, path: HostedPath<M>, start: InstanceStart<M>? = nil)
    where M.State: Codable, M.Event: Codable, M.Output: Encodable {
        factories[name] = Factory<M>(env: env, path: path, start: start)
    }

    /// Registers a machine type without an environment under `name`.
    @inlinable
    public mutating func register<M: Machine>(_ machine: M.Type, as name: String? = nil)
    where M.State: Codable, M.Event: Codable, M.Output: Encodable, M.Env == Void {
        register(machine, as: name, env: ())
    }
}

/// Makes hosted instances of one registered machine type.
protocol HostedMachineFactory: StoredEventCodec {
    /// The factory a worker uses: its instances answer through `wiring.link` with one reply
    /// handler, and are wired to the worker's turn, poison watch and core.
    func bound(to wiring: HostWiring) -> any HostedMachineFactory
    /// The factory with its instances of type `type` noting their events in `flight` through
    /// one ``RunRecorder`` made now (the worker's, once it opens), not one looked up in
    /// ``SharedRecordings`` per instance made (4 % of a worker spawning fresh keys).
    func recording(_ type: String, in flight: FlightRecorder) -> any HostedMachineFactory
    /// - Parameters:
    ///   - type: The type name the topology gives the machine.
    ///   - watched: Whether a watcher of `state:<address>` is subscribed.
    ///   - durable: For a durable instance, its type name, durability and the record it
    ///     continues from (nil for a new one).
    ///   - startsNow: Whether a new instance boots here, on `executor`, which the caller runs on
    ///     (``Hosted``'s `startsNow`).
    /// - Throws: When the record does not decode as this type's snapshot; when the factory is
    ///   not ``bound(to:)`` a worker.
    func make(address: String, type: String, mailboxCapacity: Int, io: any IOPerformer, watched: Bool, executor: (any SerialExecutor)?,
              durable: DurableStart?, startsNow: Bool, handover: (any TableHandover)?) throws(WireError) -> any HostedMachine
    /// A table for the resting states of this type's instances, made at `type` (``StateTable``);
    /// nil when they cannot rest as their state alone (``StateTable/admits(initial:)``).
    func stateTable(type: String) -> (any AnyStateTable)?
    /// Why a JSON event does not decode as the type's event, or nil when it does.
    func check(event json: [UInt8], address: String) -> WireError?
    /// The case of an event in either codec, in whatever form its sender wrote it, as this
    /// type's event encodes it (``EventCase``); nil when it does not decode or has no case.
    func eventCase(of event: [UInt8], binary: Bool) -> String?
}

extension HostedMachineFactory {
    /// ``make(address:type:mailboxCapacity:io:watched:executor:durable:startsNow:resting:)`` for
    /// an instance that was not resting.
    func make(address: String, type: String, mailboxCapacity: Int, io: any IOPerformer, watched: Bool, executor: (any SerialExecutor)?,
              durable: DurableStart?, startsNow: Bool) throws(WireError) -> any HostedMachine {
        try make(address: address, type: type, mailboxCapacity: mailboxCapacity, io: io, watched: watched, executor: executor,
                 durable: durable, startsNow: startsNow, handover: nil)
    }
}

/// What a worker's hosts are wired to, each named for what they use it for (``Hosted``): the
/// socket their messages leave by, the turn they note wake-ups, durable changes and ends in,
/// the quarantined events they refuse, the way into the core for their outputs, and the clock
/// their timers run on.
///
/// A class, so that a factory hands it on with one reference: as a struct of four references
/// and a clock it was copied, each field retained and released, at each instance made.
final class HostWiring: Sendable {
    let link: WorkerLink
    let turn: Turn
    let poison: PoisonWatch
    let inlet: CoreInlet
    let clock: any HostClock

    init(link: WorkerLink, turn: Turn, poison: PoisonWatch, inlet: CoreInlet, clock: any HostClock = WallClock()) {
        self.link = link
        self.turn = turn
        self.poison = poison
        self.inlet = inlet
        self.clock = clock
    }
}

/// How a durable instance starts: its type name and durability, and the record it continues
/// from when it has one, with the journal after it for `journal`.
struct DurableStart: Sendable {
    var type: String
    var durability: Durability
    var record: MachineRecord?
    /// The journal entries after `record`'s sequence, oldest first (`journal` only).
    var journal: [JournalEntry] = []
}

struct Factory<M: Machine>: HostedMachineFactory where M.State: Codable, M.Event: Codable, M.Output: Encodable {
    let env: M.Env
    let path: HostedPath<M>
    /// Where instances start and how their records decode, for a registration that is more
    /// than a type (a reducer); nil for a machine type, whose instances start at `initialState`.
    let start: InstanceStart<M>?
    /// What a factory ``bound(to:)`` a worker wires its instances to, and the reply handler they
    /// share: one closure per machine type, not one per instance (less memory per idle
    /// instance, and one object the cache keeps warm instead of one per host).
    private var wiring: HostWiring?
    private var replyHandler: HostedPath<M>.ReplyHandler?
    /// What its instances do when they end, shared like the reply handler: for a durable
    /// instance, and for one that is not.
    private var durableEndHandler: Hosted<M>.EndHandler?
    private var endHandler: Hosted<M>.EndHandler?
    /// What its instances call around each event for the worker's flight recorder, shared the
    /// same way.
    private var recordings: SharedRecordings<M>?
    /// The recorder of the instances of type ``recordedType`` for ``recordedFlight``
    /// (``recording(_:in:)``); nil until the worker's flight recorder opens.
    private var recordedType: String?
    private var recordedFlight: FlightRecorder?
    private var ownRecording: RunRecorder<M>?

    init(env: M.Env, path: HostedPath<M>, start: InstanceStart<M>? = nil) {
        self.env = env
        self.path = path
        self.start = start
    }

    /// A stored record of this type, decoded as the registration's instances decode it.
    func decodeRecord(_ bytes: [UInt8]) throws -> Snapshot<M> {
        guard let start else { return try DurableRecord.decode(bytes, as: M.self) }
        var snapshot: Snapshot<M>?
        try start.decoding { snapshot = try DurableRecord.decode(bytes, as: M.self) }
        guard let snapshot else { throw WireError(.unknownMachine, "\(M.self)'s registration decoded no record") }
        return snapshot
    }

    func bound(to wiring: HostWiring) -> any HostedMachineFactory {
        var bound = self
        bound.wiring = wiring
        bound.replyHandler = path.replyHandler(wiring.link)
        bound.durableEndHandler = Hosted<M>.ending(durability: .state, link: wiring.link, turn: wiring.turn)
        bound.endHandler = Hosted<M>.ending(durability: .none, link: wiring.link, turn: wiring.turn)
        bound.recordings = SharedRecordings(path: path)
        return bound
    }

    func recording(_ type: String, in flight: FlightRecorder) -> any HostedMachineFactory {
        var recorded = self
        recorded.recordedType = type
        recorded.recordedFlight = flight
        recorded.ownRecording = Hosted<M>.recording(type: type, in: flight, path: path)
        return recorded
    }

    func make(address: String, type: String, mailboxCapacity: Int, io: any IOPerformer, watched: Bool, executor: (any SerialExecutor)?,
              durable: DurableStart?, startsNow: Bool, handover: (any TableHandover)?) throws(WireError) -> any HostedMachine {
        guard let wiring else {
            throw WireError(.unknownMachine, "\(M.self)'s factory is not bound to a worker (bound(to:)); '\(address)' was not made",
                            address: address)
        }
        var restoring: Snapshot<M>?
        var cursor: JournalCursor?
        if let record = durable?.record {
            do {
                restoring = try decodeRecord(record.snapshot)
            } catch {
                let why = (error as? WireError)?.message ?? "\(error)"
                throw WireError(.unknownMachine, "the stored record of '\(address)' does not decode as \(M.self)'s snapshot: \(why)",
                                address: address)
            }
            if durable?.durability == .journal, let snapshot = restoring, let journal = durable?.journal {
                restoring = try replaying(journal, onto: snapshot, address: address, type: type, flight: wiring.poison.recorder)
                cursor = JournalCursor(recoveredThrough: journal.last?.sequence ?? record.sequence, replayed: journal.count)
            }
        }
        // No generic helper (`flatMap`, `??`) between the handler and the host: passing a
        // closure through one re-abstracts it, which allocates wrappers per instance that the
        // host then keeps (heaptrack found seven of 88 bytes per instance, four made here).
        let durability = durable?.durability ?? .none
        let type = durable?.type ?? type
        return Hosted<M>(address: address, env: env, path: path, mailboxCapacity: mailboxCapacity, io: io, link: wiring.link,
                         turn: wiring.turn, poison: wiring.poison, inlet: wiring.inlet, watched: watched, clock: wiring.clock,
                         executor: executor, replyHandler: replyHandler,
                         endHandler: durability == .none ? endHandler : durableEndHandler,
                         recording: recording(type: type, durability: durability),
                         initialState: (handover as? StateTable<M>.Start)?.state ?? start?.initialState,
                         type: type, durability: durability, restoring: restoring, cursor: cursor, startsNow: startsNow,
                         resumes: handover != nil)
    }

    /// The flight recorder's shared ``RunRecorder`` for an instance of type `type`; nil when the
    /// worker records nothing, or for a `journal` instance, whose recorder is its own.
    private func recording(type: String, durability: Durability) -> RunRecorder<M>? {
        guard durability != .journal, let recordings, let flight = wiring?.poison.recorder else { return nil }
        if let ownRecording, flight === recordedFlight, type == recordedType { return ownRecording }
        return recordings.recording(type: type, in: flight)
    }

    func stateTable(type: String) -> (any AnyStateTable)? {
        let initial = start?.initialState ?? M.initialState
        guard StateTable<M>.admits(initial: initial) else { return nil }
        return StateTable(initial: initial, type: type, path: path)
    }

    func check(event json: [UInt8], address: String) -> WireError? {
        do {
            try Hosted<M>.check(try Hosted<M>.decodeEvent(json[...], address: address), address: address)
            return nil
        } catch {
            return error
        }
    }
}

/// How the instances of a registration that is more than a machine type start: a SwiftTea
/// reducer registered as a value has no static initial state, and its state decodes only with
/// the reducer bound (``TeaReducerBinding``).
@usableFromInline
struct InstanceStart<M: Machine>: Sendable {
    /// The state a new instance starts in, instead of `M.initialState`.
    let initialState: M.State
    /// Runs `decode`, which decodes stored records of this registration, with what they need.
    let decoding: @Sendable (_ decode: () throws -> Void) throws -> Void

    @usableFromInline
    init(initialState: M.State, decoding: @escaping @Sendable (_ decode: () throws -> Void) throws -> Void) {
        self.initialState = initialState
        self.decoding = decoding
    }
}
