public import Grove
public import GroveRuntime
public import GroveWire

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
    @usableFromInline let drain: @Sendable (MachineHost<M>) async -> Void
    /// Drains a host whose executor the caller is running on (a worker's loop), synchronously.
    @usableFromInline let drainHere: @Sendable (MachineHost<M>) -> Void
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

    /// The record of a durable instance now, on the host's executor: its state alone when that
    /// is all it holds (no snapshot built, the state encoded specialized), else its whole
    /// snapshot; nil once it has ended.
    @usableFromInline let record: @Sendable (MachineHost<M>) throws -> [UInt8]?

    @usableFromInline typealias ReplyHandler = @Sendable (_ token: UInt64, _ address: String, Result<M.State, HostError>,
                                                         _ unhandled: Bool) -> Void
    /// Whether the type's states have secrets (``Redacting``): then what leaves the worker is
    /// their redacted form. Found once per machine type, so a reply pays one branch.
    @usableFromInline let redacts: Bool

    /// Mailbox batches a host drains per turn of the worker's I/O thread, which its hosts share:
    /// an effect that sends results as fast as they are handled gets the rest drained later,
    /// after the sockets had their turn.
    @usableFromInline static var drainRounds: Int { 8 }

    @inlinable
    init() where M.Event: Codable, M.State: Codable {
        let redacts = Redaction.applies(to: M.State.self)
        self.redacts = redacts
        send = { host, event throws(HostError) in try host.send(event) }
        sendReplying = { host, event, token throws(HostError) in try host.send(event, replyToken: token) }
        sendNow = { host, event in host.onOwnExecutor { $0.sendNow(event) } }
        sendNowReplying = { host, event, reply in
            host.onOwnExecutor { $0.sendNow(event) { Self.answer(reply, with: $0, unhandled: $1, redacting: redacts) } }
        }
        drain = { host in await host.flush(rounds: Self.drainRounds) }
        drainHere = { host in host.onOwnExecutor { $0.flush(rounds: Self.drainRounds) } }
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
