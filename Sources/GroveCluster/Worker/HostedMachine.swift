import Foundation
import Grove
import GroveRuntime
import GroveWire
import Synchronization

/// One machine instance on a worker, seen through JSON: what the worker's message loop drives.
protocol HostedMachine: AnyObject, Sendable {
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
}

extension HostedMachine {
    /// ``enqueue(_:binary:correlation:)`` for an event no request carried.
    func enqueue(_ payload: ArraySlice<UInt8>, binary: Bool) -> WireError? {
        enqueue(payload, binary: binary, correlation: 0)
    }
}

final class Hosted<M: Machine>: HostedMachine where M.State: Codable, M.Event: Codable, M.Output: Encodable {
    // What every event reads first, in one cache line.
    let host: MachineHost<M>
    let path: HostedPath<M>
    /// Whether the host runs on an executor given to it (a worker's loop), on which its events
    /// arrive: an event that finds the host idle is then handled at once instead of queued.
    private let handlesOnArrival: Bool
    /// The worker's flight recorder, while recording is on: an event run on arrival is noted
    /// as the bytes received, with the id of the request that carried them.
    private let recorder: FlightRecorder?
    let address: String
    let link: WorkerLink
    let durability: Durability
    /// The type name the topology gives it, for its record, the flight recorder and the
    /// quarantined patterns.
    let type: String
    /// Set when a durable instance changed and is not written yet: it joins the link's pending
    /// writes once per write, not once per event.
    let unwritten = Atomic<Bool>(false)
    /// Where a `journal` instance's journal stands; nil for the other levels.
    let journal: JournalTail?
    let drainTarget: HostDrain<M>
    /// Publishes state changes while someone watches `state:<address>`. Not observing otherwise
    /// keeps the host on its fast path (no observer to notify per commit).
    private let publisher = Mutex<Task<Void, Never>?>(nil)

    /// - Parameters:
    ///   - executor: The executor the host runs on: a worker's loop. With one, ``send`` and
    ///     ``enqueue`` must be called on it (the worker runtime, which shares it, does), since an
    ///     event that finds the host idle is handled right there. Without one the host runs on an
    ///     actor of its own and events are always queued.
    ///   - replyHandler: How the host answers queued senders that wait: `path`'s handler bound
    ///     to `link`, which a worker makes once per machine type and shares between its hosts;
    ///     one of the host's own when `nil`.
    ///   - initialState: Where a new instance starts, when its registration says (a reducer's
    ///     initial state); `M.initialState` otherwise.
    ///   - type: The type name the topology gives the machine.
    ///   - durable: The type name and durability of a durable instance, the snapshot it
    ///     continues from (nil for a new one) and, for `journal`, where its journal stands.
    init(address: String, env: M.Env, path: HostedPath<M>, mailboxCapacity: Int, io: any IOPerformer, link: WorkerLink,
         executor: (any SerialExecutor)? = nil, replyHandler: HostedPath<M>.ReplyHandler? = nil, initialState: M.State? = nil,
         type: String = "", durable: (type: String, durability: Durability, restoring: Snapshot<M>?, cursor: JournalCursor?)? = nil) {
        self.address = address
        self.path = path
        self.link = link
        let type = durable?.type ?? type
        self.type = type
        let durability = durable?.durability ?? .none
        self.durability = durability
        let journal = durability == .journal ? JournalTail(durable?.cursor ?? JournalCursor()) : nil
        self.journal = journal
        var options = HostOptions<M>()
        options.address = address
        options.mailboxCapacity = mailboxCapacity
        options.executor = executor
        // A durable machine's snapshots carry the io its request types re-issue.
        options.reissuesIO = durability != .none
        handlesOnArrival = executor != nil
        let drainTarget = HostDrain(path: path)
        self.drainTarget = drainTarget
        let woken = link.turn.woken
        options.drainScheduler = { woken.schedule(drainTarget) }
        // Events whose senders wait are answered through one handler, with the reply's
        // correlation and codec in a token, instead of a closure per event.
        if let replyHandler {
            options.replyHandler = replyHandler
        } else {
            options.replyHandler = path.replyHandler(link)
        }
        options.trace = AuditTrail<M>.handler(for: address, link: link, initial: durable?.restoring?.state ?? initialState ?? M.initialState)
        options.onEnd = Self.ending(address, durability: durability, link: link)
        // Every machine's events, durable or not: a crash is attributed to the event that
        // caused it, and to its sender, whatever the machine keeps.
        let recorder = link.poison.recorder
        self.recorder = recorder
        if let journal {
            options.recorder = Self.journaling(address, type: type, into: journal, flight: recorder, path: path)
        } else if let recorder {
            options.recorder = Self.recording(address, type: type, in: recorder, path: path)
        }
        host = MachineHost(machine: M.self, env: env, initialState: durable?.restoring?.state ?? initialState, performer: io,
                           clock: WallClock(), options: options, logger: nil, restoring: durable?.restoring)
        drainTarget.attach(host)
        if durability != .none { noteChangesAfterDrains(restoring: durable?.restoring) }
        start(watched: link.observation.watches("state:" + address))
    }

    deinit {
        drainTarget.detach()
    }

    var hasEnded: Bool {
        // A host with no executor of its own runs on its actor: not read from outside. Every
        // host a worker makes runs on the worker's loop.
        handlesOnArrival ? host.onOwnExecutor { $0.hasEnded } : false
    }

    func setWatched(_ watched: Bool) {
        publisher.withLock { task in
            if watched, task == nil {
                let host = host
                task = Task { await self.publish(await host.states()) }
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
            if task == nil { task = Task { await self.publish(states) } }
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

    /// A durable instance ran something: it joins the link's pending writes (once until written).
    func changed() {
        guard durability != .none, !unwritten.exchange(true, ordering: .acquiringAndReleasing) else { return }
        link.turn.durable.changed(self)
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
        if durability != .none, link.poison.hasQuarantined(address) { try refuseIfQuarantined(event) }
        if link.poison.hasPatterns { try refuseIfPatternQuarantined(event) }
        return event
    }

    /// Throws `invalid-event` when the machine refuses `event`.
    static func check(_ event: M.Event, address: String) throws(WireError) {
        guard let refusal = M.refusal(of: event) else { return }
        throw WireError(.invalidEvent, "the event for \(address) is refused: \(refusal)", address: address)
    }

    /// An event in GroveWire's binary codec (the header's binary flag).
    func decodeBinaryEvent(_ payload: ArraySlice<UInt8>) throws(WireError) -> M.Event {
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
            // Our parser, not JSONValue's Decodable init: that one takes time cubic in the
            // nesting (0.65 s at 300 levels in a debug build), long enough to miss heartbeats.
            var parser = LocatingJSONParser(payload, document: "the event", emptyAdvice: "send a JSON event", maximumDepth: 512)
            let parsed = try? parser.parse()
            var failure = error
            failure.address = address
            switch parsed {
            case .string(let name)?:
                // A bare case name: fine for a case without associated values.
                let expanded = Array(#"{"\#(name)":{}}"#.utf8)
                do {
                    return try WireJSON.decode(M.Event.self, from: expanded, what: "the event for \(address)")
                } catch {
                    failure = Self.explain(error, name: name, address: address)
                }
            case .object(let members)? where members.count == 1:
                failure = Self.explain(error, name: members.keys.first!, address: address)
            case .object(let members)? where failure.path == "$":
                failure.message = "an event is an object with exactly one key, its case name; found "
                    + (members.isEmpty ? "no keys" : "keys " + members.keys.sorted().joined(separator: ", "))
            case nil where failure.code == .malformedJSON:
                // Not JSON: say where, as fsm-send does (Foundation's parser names no position).
                var parser = LocatingJSONParser(payload, document: "the event", emptyAdvice: "send a JSON event", maximumDepth: 512)
                do {
                    _ = try parser.parse()
                } catch {
                    let position = error.position(multiline: payload.contains(UInt8(ascii: "\n")))
                    failure.message = "the event for \(address) is not valid JSON: at \(position) (\(error.pathDescription)), \(error.message)"
                    failure.path = error.pathDescription
                }
            case .object?, nil, .null?, .bool?, .number?, .integer?, .array?:
                break
            }
            if failure.message.hasSuffix(".") { failure.message.removeLast() }
            failure.message += ". Events are JSON as Swift's Codable encodes \(M.Event.self): {\"caseName\":{\"label\":value}}, "
                + "{\"caseName\":{\"_0\":value}} for unlabelled values, or \"caseName\" for a case without values"
            throw failure
        }
    }

    /// What went wrong with `{"name": ...}`: an unknown case, or a known case whose values are
    /// missing or of the wrong type.
    static func explain(_ error: WireError, name: String, address: String) -> WireError {
        var explained = error
        explained.address = address
        if error.path == "$" {
            explained.message = "'\(name)' is not a case of \(M.self).Event"
        } else if error.message.contains("is missing key") {
            explained.message = "'\(name)' needs its values: " + error.message.replacingOccurrences(of: "the event for \(address) ", with: "")
        }
        return explained
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
