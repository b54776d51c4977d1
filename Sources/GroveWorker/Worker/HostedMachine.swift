import Foundation
public import Grove
import GroveCluster
public import GroveRuntime
public import GroveWire
import Synchronization

// One event on its host, the way it goes: the runtime hands it to its instance
// (``HostedMachine/send(_:binary:reply:)``, or ``HostedMachine/enqueue(_:binary:correlation:)``
// for a no-wait event); ``Hosted`` decodes it and checks it against the machine's refusals and
// the quarantine; an idle host on the worker's loop runs it at once (``HostedPath/sendNow``),
// a busy one queues it; the state it committed goes back through ``StateReply`` into the
// turn's batch of replies on the ``WorkerLink``. A durable instance then joins the turn's
// durable writes (``Hosted/changed()``), and the turn's commit asks it what to write
// (``Hosted/write(snapshotEvery:)``, at the end of this file) before the replies leave.

/// What one durable instance writes in a group commit (``WorkerRuntime/writeDurable()``).
struct DurableWrite: Sendable {
    var address: String
    /// Its record: for `state` at every write, for `journal` when ``JournalCursor`` says.
    var record: MachineRecord?
    /// Events to append to its journal (`journal` only).
    var journal: [JournalCursor.JournalEvent] = []
    /// Whatever the store holds for the address goes before `record`: a `journal` instance's
    /// first record, so that an earlier life's journal is never replayed onto it.
    var replacesStored = false
    /// Why its record could not be written.
    var failure: WireError?
    /// Answers of idempotency keys to keep, and kept ones its window let go (``AnswerWindow``).
    var answers: [AnswerEntry] = []
    var forgottenAnswers: [IdempotencyKey] = []
}

/// One machine instance on a worker, seen through JSON: what the worker's message loop drives.
protocol HostedMachine: AnswerKeeper {
    /// Decodes and hands over an event without waiting for it: nil when taken (queued, or
    /// handled at once by an idle host on a worker's loop), else why not. A no-wait event is
    /// answered at once either way. With `binary`, the event is in GroveWire's binary codec,
    /// else JSON; `correlation` is the request's id, which the flight recorder notes with an
    /// event that runs at once. Calls from one thread keep their order.
    func enqueue(_ payload: ArraySlice<UInt8>, binary: Bool, correlation: UInt64) -> WireError?
    /// Decodes and hands over an event (handled at once by an idle host on a worker's loop,
    /// else queued); `reply` gets the state it committed (in the event's codec) or why it did
    /// not run.
    func send(_ payload: ArraySlice<UInt8>, binary: Bool, reply: StateReply)
    /// Answers with the state (JSON) after everything queued before, as an event would be; or
    /// `unencodable-state` when the state does not encode.
    func state(reply: @escaping @Sendable (Result<[UInt8], WireError>) -> Void)
    /// Cancels an effect by id (JSON) after everything queued before; nil, or why not.
    func cancel(effect payload: [UInt8], done: @escaping @Sendable (WireError?) -> Void)
    /// Stops the machine after everything queued before; answers with its final state (JSON),
    /// or `unencodable-state` when that does not encode.
    func stop(reply: @escaping @Sendable (Result<[UInt8], WireError>) -> Void)
    /// Starts or stops publishing state changes as watchers come and go.
    func setWatched(_ watched: Bool)
    /// Starts or stops publishing the work in flight (`effect:<address>`) as watchers come and go.
    func setEffectsWatched(_ watched: Bool)
    /// What of this instance survives its worker.
    var durability: Durability { get }
    /// Whether it reached a terminal state, was stopped or failed. Read on the worker's loop,
    /// the host's executor.
    var hasEnded: Bool { get }
    /// What to write for this durable instance now, on the worker's loop: its record, or the
    /// events of a `journal` instance; nil once it has ended (its record and journal go).
    /// - Parameter snapshotEvery: The topology's `durability.snapshotEvery`.
    func write(snapshotEvery: Int) -> DurableWrite?
    /// A `journal` instance writes its record at the next commit (the store asked, to free its
    /// old journal entries); nothing for the others.
    func writeRecordNext()
    /// Its machine type's name in the topology, and the events taken and not yet run: the
    /// metrics' mailbox depth.
    var type: String { get }
    var queuedEventCount: Int { get }
    /// Its machine's event counts on this worker, shared by a keyed machine's instances.
    var eventCounts: MachineEventCounts { get }
    /// The passivation sweep under way when a message last reached it (``Passivation``).
    var touchedSweep: Int { get }
    func touch(_ sweep: Int)
    /// The sweep it was last queued to be judged at (``Passivation/queue(_:machine:touched:)``):
    /// an entry queued for another is stale.
    var judgedAtSweep: Int { get }
    func judge(atSweep sweep: Int)
    /// Whether it may leave memory now, on the worker's loop (``MachineHost/resting``).
    var resting: Resting { get }
    /// It leaves memory (passivation): its timers cancelled, its streams finished, without
    /// ending. Its record, written before, holds what it had.
    func passivate()
    /// Takes over the transition a resting instance ran on the state it was made from
    /// (``TableOutcome/needsHost(_:)``), on the worker's loop, just made: commits it, runs its
    /// effect and answers `reply`. For a no-wait event (`reply` nil), why it was refused, for the
    /// caller to answer instead of `accepted`; nil once taken.
    func takeOver(_ start: any TableHandover, reply: StateReply?) -> WireError?
    /// Its host was drained by `target`, on the worker's loop (``WorkerRuntime/drained(_:)``):
    /// a durable instance that ran something joins the turn's writes.
    func drained(_ target: DrainTarget)
}

extension HostedMachine {
    /// ``enqueue(_:binary:correlation:)`` for an event no request carried.
    func enqueue(_ payload: ArraySlice<UInt8>, binary: Bool) -> WireError? {
        enqueue(payload, binary: binary, correlation: 0)
    }
}

extension Hosted {
    /// A durable instance ran something: it joins the turn's durable writes (once until written).
    func changed() {
        guard durability != .none, !unwritten.exchange(true, ordering: .acquiringAndReleasing) else { return }
        turn.durable.changed(self)
    }

    func enqueue(_ payload: ArraySlice<UInt8>, binary: Bool, correlation: UInt64) -> WireError? {
        do throws(WireError) {
            let event = try decodeEvent(payload, binary: binary)
            do {
                if handlesOnArrival, runsOnArrival(payload, binary: binary, correlation: correlation, { path.sendNow(host, event) }) {
                    changed()
                    return nil
                }
                try path.send(host, event)
                changed() // queued: the record written before `accepted` leaves carries it
                return nil
            } catch {
                return WireError(refusal: error, address: address)
            }
        } catch {
            return error
        }
    }

    func send(_ payload: ArraySlice<UInt8>, binary: Bool, reply: StateReply) {
        let event: M.Event
        do {
            event = try decodeEvent(payload, binary: binary)
        } catch {
            host.requestAnswer { reply.fail(error) }
            return
        }
        do {
            if handlesOnArrival, runsOnArrival(payload, binary: binary, correlation: reply.correlation, { path.sendNowReplying(host, event, reply) }) {
                changed()
                return
            }
            if let token = reply.token {
                try path.sendReplying(host, event, token.raw)
            } else {
                // A correlation with the top bit set (the coordinator's never have it) cannot
                // share a token with the codec: answered through a closure of its own.
                try host.send(event) { [redacts = path.redacts] in HostedPath<M>.answer(reply, with: $0, unhandled: $1, redacting: redacts) }
            }
            changed()
        } catch {
            let refusal = WireError(refusal: error, address: address)
            host.requestAnswer { reply.fail(refusal) }
        }
    }

    /// `sendNow`, the event it runs noted by the recorder as `payload`, the bytes it was decoded
    /// from, instead of being encoded again, with `correlation`, the request that carried it.
    @inline(__always)
    private func runsOnArrival(_ payload: ArraySlice<UInt8>, binary: Bool, correlation: UInt64, _ sendNow: () -> Bool) -> Bool {
        guard let recorder else { return sendNow() }
        return recorder.arriving(payload, binary: binary, correlation: correlation, sendNow)
    }

    /// An event from outside, in either codec, that its machine accepts (``Machine/refusal(of:)``).
    func decodeEvent(_ payload: ArraySlice<UInt8>, binary: Bool) throws(WireError) -> M.Event {
        let event = binary ? try decodeBinaryEvent(payload) : try decodeEvent(payload)
        try Self.check(event, address: address)
        if durability != .none, poison.hasQuarantined(address) { try refuseIfQuarantined(event) }
        if poison.hasPatterns { try refuseIfPatternQuarantined(event) }
        return event
    }

    /// Throws `invalid-event` when the machine refuses `event`.
    static func check(_ event: M.Event, address: String) throws(WireError) {
        guard let refusal = M.refusal(of: event) else { return }
        throw WireError(.invalidEvent, "the event for \(address) is refused: \(refusal)", address: address)
    }

    /// An event in GroveWire's binary codec (the header's binary flag).
    func decodeBinaryEvent(_ payload: ArraySlice<UInt8>) throws(WireError) -> M.Event {
        try Self.decodeBinaryEvent(payload, address: address, path: path)
    }

    /// ``decodeBinaryEvent(_:)`` for the machine at `address`, whose type's path is `path`.
    static func decodeBinaryEvent(_ payload: ArraySlice<UInt8>, address: String, path: HostedPath<M>) throws(WireError) -> M.Event {
        do {
            return try path.decodeBinary(payload)
        } catch {
            throw WireError(.undecodableEvent, "the binary event does not decode as \(M.self).Event: \(error.message)",
                            address: address, path: error.path)
        }
    }

    /// The machine's `Event` as Swift's Codable writes it; a bare JSON string `"login"` is short
    /// for `{"login":{}}`, a case without payload.
    func decodeEvent(_ slice: ArraySlice<UInt8>) throws(WireError) -> M.Event {
        try Self.decodeEvent(slice, address: address)
    }

    /// ``decodeEvent(_:)`` for the machine at `address`.

    static func decodeEvent(_ slice: ArraySlice<UInt8>, address: String) throws(WireError) -> M.Event {
        if let event = WireJSON.decodeQuickly(M.Event.self, from: slice) { return event }
        let payload = Array(slice)
        do {
            return try WireJSON.decode(M.Event.self, from: payload, what: "the event for \(address)")
        } catch {
            // A bare case name, or why it does not decode (Hosted+Decoding.swift).
            return try decodeBareCase(payload, failure: error, address: address)
        }
    }
}

/// The per-event steps of hosting one machine type: decoding an event, handling it on arrival
/// or queueing it, draining the host, and answering a waiting sender with the committed state
/// in the event's codec (on arrival, and through the reply handler the type's hosts share).
///
/// Built by the inlinable ``WorkerConfiguration/register(_:as:env:)`` so that these closures are
/// compiled where the machine type is known, and so specialized for it. Called from generic
/// code they would look up type metadata for the host's mailbox and items on every event.
///
/// A class: made once per machine type, and every instance of the type refers to it (as a
/// struct of eight closures it was copied into each instance and its drain target).
@usableFromInline
final class HostedPath<M: Machine>: Sendable {
    @usableFromInline let send: @Sendable (MachineHost<M>, M.Event) throws(HostError) -> Void
    /// Queues an event answered through the host's reply handler with a token.
    @usableFromInline let sendReplying: @Sendable (MachineHost<M>, M.Event, UInt64) throws(HostError) -> Void
    /// Handles an event at once when its host is idle (``MachineHost/sendNow(_:)``); false when
    /// it must queue. Called on the host's executor only.
    @usableFromInline let sendNow: @Sendable (MachineHost<M>, M.Event) -> Bool
    /// ``sendNow`` for a sender that waits: answered with `reply` at once, in the machine's
    /// turn.
    @usableFromInline let sendNowReplying: @Sendable (MachineHost<M>, M.Event, StateReply) -> Bool
    /// Drains a host in a task, or one whose executor the caller is running on (a worker's
    /// loop) synchronously; the host passed as an actor, so that an instance's
    /// ``HostDrain`` is not generic.
    @usableFromInline let drainer: HostDrainer
    /// Starts and boots a host on its executor, which the caller runs on
    /// (``MachineHost/startNow()``); what leaves memory (``MachineHost/resting``), and its
    /// leaving (``MachineHost/passivate()``). Specialized like the rest: a worker spawns and
    /// passivates an instance per fresh key, and in generic code each of these looked up type
    /// metadata several times.
    @usableFromInline let startNow: @Sendable (MachineHost<M>) -> Void
    @usableFromInline let resting: @Sendable (MachineHost<M>) -> Resting
    @usableFromInline let passivate: @Sendable (MachineHost<M>) -> Void
    /// Decodes an event in GroveWire's binary codec.
    @usableFromInline let decodeBinary: @Sendable (ArraySlice<UInt8>) throws(BinaryCodingError) -> M.Event
    /// Appends an event as its `Codable` conformance writes it: in GroveWire's binary codec
    /// (returns true), else JSON (false), else nothing (nil). What names an event in the
    /// worker's flight recorder and quarantine.
    @usableFromInline let encodeEvent: @Sendable (M.Event, inout [UInt8]) -> Bool?
    /// The hosts' reply handler (``HostOptions/replyHandler``) answering through a worker's
    /// link: the state an event committed in the event's codec, or why it did not run. A worker
    /// makes one per machine type and its hosts share it.
    @usableFromInline let replyHandler: @Sendable (WorkerLink) -> ReplyHandler
    /// Makes an instance's host: specialized like the rest, since a worker makes one per fresh
    /// key (``MachineHost``'s init is inlinable), where generic code looked up the metadata of
    /// the host, its mailbox and their items several times per instance.
    @usableFromInline let makeHost: @Sendable (_ env: M.Env, _ initialState: M.State?, _ io: any IOPerformer, _ clock: any HostClock,
                                              _ options: HostOptions<M>, _ restoring: Snapshot<M>?) -> MachineHost<M>

    /// The record of a durable instance now, on the host's executor: its state alone when that
    /// is all it holds (no snapshot built, the state encoded specialized), else its whole
    /// snapshot; nil once it has ended.
    @usableFromInline let record: @Sendable (MachineHost<M>) throws -> [UInt8]?

    @usableFromInline typealias ReplyHandler = @Sendable (_ token: UInt64, _ address: String, Result<M.State, HostError>,
                                                         _ unhandled: Bool) -> Void
    /// Whether the type's states have secrets (``Redacting``): then what leaves the worker is
    /// their redacted form. Found once per machine type, so a reply pays one branch.
    @usableFromInline let redacts: Bool
    /// What runs per event and per sweep on the resting states of the type's instances
    /// (``StateTable``).
    @usableFromInline let stateTable: StateTablePath<M>

    /// Mailbox batches a host drains per turn of the worker's I/O thread, which its hosts share:
    /// an effect that sends results as fast as they are handled gets the rest drained later,
    /// after the sockets had their turn.
    @usableFromInline static var drainRounds: Int { 8 }

    @inlinable
    init() where M.Event: Codable, M.State: Codable, M.Output: Encodable {
        let redacts = Redaction.applies(to: M.State.self)
        self.redacts = redacts
        stateTable = StateTablePath()
        send = { host, event throws(HostError) in try host.send(event) }
        sendReplying = { host, event, token throws(HostError) in try host.send(event, replyToken: token) }
        // Per event, and per instance in a passivation sweep: no closure boxed per call
        // (``MachineHost/sendNowOnOwnExecutor(_:)``, ``MachineHost/onOwnExecutor(with:_:)``).
        sendNow = { host, event in host.sendNowOnOwnExecutor(event) }
        sendNowReplying = { host, event, reply in
            host.sendNowOnOwnExecutor(event) { Self.answer(reply, with: $0, unhandled: $1, redacting: redacts) }
        }
        drainer = HostDrainer(
            drain: { host in await unsafeDowncast(host, to: MachineHost<M>.self).flush(rounds: Self.drainRounds) },
            drainHere: { host in
                unsafeDowncast(host, to: MachineHost<M>.self).onOwnExecutor(with: ()) { host, _ in host.flush(rounds: Self.drainRounds) }
            })
        startNow = { host in host.onOwnExecutor(with: ()) { host, _ in host.startNow() } }
        resting = { host in host.onOwnExecutor(with: ()) { host, _ in host.resting } }
        passivate = { host in host.onOwnExecutor(with: ()) { host, _ in host.passivate() } }
        makeHost = { env, initialState, io, clock, options, restoring in
            MachineHost(machine: M.self, env: env, initialState: initialState, performer: io, clock: clock, options: options,
                        logger: nil, restoring: restoring)
        }
        decodeBinary = { payload throws(BinaryCodingError) in try BinaryCodec.decode(M.Event.self, from: payload) }
        record = { host in
            try host.onOwnExecutor { host -> Result<[UInt8]?, any Error> in
                guard !host.hasEnded else { return .success(nil) }
                if host.holdsOnlyState, let alone = DurableRecord.encode(stateAlone: host.state) { return .success(alone) }
                return Result { try DurableRecord.encode(host.snapshot()) }
            }.get()
        }
        encodeEvent = { event, bytes in
            let start = bytes.count
            if (try? BinaryCodec.encode(event, into: &bytes)) != nil { return true }
            bytes.removeSubrange(start...)
            guard let json = try? WireJSON.encode(event) else { return nil }
            bytes += json
            return false
        }
        replyHandler = { link in
            { token, address, result, unhandled in
                Self.answer(StateReply(link: link, token: ReplyToken(raw: token), address: address), with: result, unhandled: unhandled, redacting: redacts)
            }
        }
    }

    /// Answers `reply` with the state an event committed (redacted when `redacting`), in the
    /// event's codec, flagged `unhandled` when `update` did not handle it, or with why it did
    /// not run.
    @inlinable
    static func answer(_ reply: StateReply, with result: Result<M.State, HostError>, unhandled: Bool = false,
                       redacting: Bool) where M.State: Encodable {
        switch result {
        case .success(let committed):
            let state = redacting ? shown(committed) : committed
            reply.send(M.State.self, unhandled: unhandled, binary: { bytes throws(BinaryCodingError) in try BinaryCodec.encode(state, into: &bytes) },
                       json: { try WireJSON.encode(state) })
        case .failure(let error):
            reply.fail(refusal: error)
        }
    }

    /// What of `state` may leave the worker: its ``Redacting/redacted`` form when it has
    /// secrets, else itself.
    @inlinable
    static func shown(_ state: M.State) -> M.State { Redaction.redact(state) }
}

/// Where the sender of one event waits: a `state` reply with the state the event committed (in
/// the event's codec), or an `error` reply saying why it did not run.
@usableFromInline
struct StateReply: Sendable {
    let link: WorkerLink
    let correlation: UInt64
    let address: String
    /// Whether the event came in GroveWire's binary codec (the reply then does too).
    let binary: Bool
    /// For a keyed event: its key and the instance that keeps its answer.
    var keyed: KeyedReply?

    init(link: WorkerLink, correlation: UInt64, address: String, binary: Bool, keyed: KeyedReply? = nil) {
        self.link = link
        self.correlation = correlation
        self.address = address
        self.binary = binary
        self.keyed = keyed
    }

    /// The reply a ``token`` stands for.
    @usableFromInline
    init(link: WorkerLink, token: ReplyToken, address: String) {
        self.init(link: link, correlation: token.correlation, address: address, binary: token.binary)
    }

    /// Correlation and codec in one number, for ``HostOptions/replyHandler``; nil for a
    /// correlation that needs the top bit (the coordinator's ids never do).
    /// A keyed event's reply has none: its answer is kept, so it goes through a closure.
    var token: ReplyToken? { keyed == nil ? ReplyToken(correlation: correlation, binary: binary) : nil }

    /// Answers with a state of type `type`, written by `binary` straight into the batch of
    /// replies, or encoded by `json`: specialized closures from a machine type's
    /// ``HostedPath``, so no generic code runs per reply.
    /// - Parameter unhandled: The machine's `update` returned `.unhandled` for the event: the
    ///   reply carries the `unhandled` flag (the state is the one it was already in).
    @usableFromInline
    func send(_ type: Any.Type, unhandled: Bool = false, binary write: (inout [UInt8]) throws(BinaryCodingError) -> Void,
              json: () throws -> [UInt8]) {
        let flags: Header.Flags = unhandled ? [.unhandled] : []
        if unhandled { link.metrics.unhandled(at: address) }
        do {
            if let keyed {
                var bytes: [UInt8] = []
                if binary { try write(&bytes) } else { bytes = try json() }
                return keep(keyed, .state, flags: binary ? flags.union(.binary) : flags, payload: bytes)
            }
            if binary {
                try link.send(.state, flags: flags.union(.binary), correlation: correlation, address: address, writingPayload: write)
            } else {
                link.send(.state, flags: flags, correlation: correlation, address: address, payload: try json())
            }
        } catch {
            let error = WireError.unencodableState(error, type: type, binary: binary, outcome: "the event ran and its state was committed",
                                                   address: address)
            // It ran: a repeat gets this answer, not a second run.
            if let keyed { return keep(keyed, .error, flags: [], payload: WireMessage.error(error, correlation: 0, address: address).payload) }
            fail(error)
        }
    }

    /// Answers with why a host refused the event or did not run it.
    @usableFromInline
    func fail(refusal error: HostError) {
        fail(WireError(refusal: error, address: address))
    }

    /// Answers with `error`, naming the machine's address when the error does not. A keyed
    /// event that failed did not run: its key is not kept.
    func fail(_ error: WireError) {
        if let keyed { return refuse(keyed, error) }
        link.send(WireMessage.error(error, correlation: correlation, address: address))
    }
}

extension Hosted {
    /// What this durable instance writes now, on the worker's loop; nil once it has ended (its
    /// record and journal go).
    func write(snapshotEvery: Int) -> DurableWrite? {
        unwritten.store(false, ordering: .releasing)
        return writeState(snapshotEvery: snapshotEvery).map(withAnswers)
    }

    /// What ``write(snapshotEvery:)`` writes of the machine itself.
    private func writeState(snapshotEvery: Int) -> DurableWrite? {
        guard let journal else {
            switch encodedRecord(through: 0) {
            case .success(let record)?: return DurableWrite(address: address, record: record)
            case .failure(let error)?: return DurableWrite(address: address, failure: error)
            case nil: return nil
            }
        }
        let (ended, holdsOnlyState) = host.onOwnExecutor(with: ()) { host, _ in (host.hasEnded, host.holdsOnlyState) }
        if ended { return nil }
        switch journal.write(holdsOnlyState: holdsOnlyState, snapshotEvery: snapshotEvery) {
        case .append(let events):
            return DurableWrite(address: address, journal: events)
        case .record(let through, let first, let events):
            switch encodedRecord(through: through) {
            case .success(let record)?:
                return DurableWrite(address: address, record: record, replacesStored: first)
            case .failure(let error)?:
                journal.recordNotWritten(first: first, appended: events.count)
                return DurableWrite(address: address, journal: first ? [] : events, failure: error)
            case nil:
                return nil
            }
        }
    }

    /// The record of this instance now, including the journal through `sequence`; nil once it
    /// has ended, or why its snapshot does not encode.
    private func encodedRecord(through sequence: UInt64) -> Result<MachineRecord, WireError>? {
        do {
            guard let snapshot = try path.record(host) else { return nil }
            return .success(MachineRecord(address: address, type: type, snapshot: snapshot, sequence: sequence))
        } catch {
            return .failure(.unencodableState(error, type: M.State.self, binary: false, outcome: "it was to be written to the store",
                                              address: address))
        }
    }
}
