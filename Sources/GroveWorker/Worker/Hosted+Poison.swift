import Foundation
import Grove
import GroveRuntime
import GroveWire
import Synchronization

extension Hosted {
    /// What the hosts of a machine of type `type` call around each event: `recorder` notes the
    /// event at the host's address (the type's ``HostedPath/encodeEvent``, specialized) before
    /// `update`, and clears it after. One per machine type and worker (``Factory``), shared by
    /// its hosts.
    static func recording(type: String, in recorder: FlightRecorder, path: HostedPath<M>) -> RunRecorder<M> {
        let encode = path.encodeEvent
        return RunRecorder(
            willRun: { address, event, origin, token in
                recorder.willRun(address: address, type: type, origin: RecordedRun.Origin(origin),
                                 correlation: ReplyToken(raw: token).correlation) { encode(event, &$0) }
            },
            didRun: { recorder.didRun() })
    }

    /// `inner` (the flight recorder's, or none) with the transition timed on `clock` around it,
    /// for the metrics' `grove_worker_transition_seconds`.
    /// The start is the host's own: a host runs one transition at a time, while the hosts of
    /// one type that share `clock` may run theirs at once on several threads.
    static func timing(_ inner: RunRecorder<M>?, on clock: TransitionClock) -> RunRecorder<M> {
        let started = TransitionStart()
        guard let inner else { return RunRecorder(willRun: { _, _, _, _ in started.mark() }, didRun: { clock.record(since: started) }) }
        return RunRecorder(
            willRun: { address, event, origin, token in
                inner.willRun(address, event, origin, token)
                started.mark()
            },
            didRun: {
                clock.record(since: started)
                inner.didRun()
            })
    }

    /// Throws `quarantined` when `event`'s case is quarantined for every address of this
    /// machine's type (a pattern the coordinator quarantined after it crashed workers). Costs
    /// an encoding of the event only while a pattern of this type is quarantined.
    func refuseIfPatternQuarantined(_ event: M.Event) throws(WireError) {
        guard let cases = poison.quarantinedCases(of: type), let name = Self.eventCase(of: event), cases.contains(name) else { return }
        throw PoisonWatch.refusal(of: PoisonPattern(type: type, event: name), address: address)
    }

    /// The case of `event` as its `Codable` conformance writes it in JSON (``EventCase``).
    static func eventCase(of event: M.Event) -> String? {
        guard let json = try? WireJSON.encode(event) else { return nil }
        return EventCase.name(ofJSON: json)
    }

    /// Throws `quarantined` when `event` is quarantined at this address.
    func refuseIfQuarantined(_ event: M.Event) throws(WireError) {
        guard let identity = RecordedRun.identity(encoding: { path.encodeEvent(event, &$0) }) else { return }
        if let id = poison.deadLetter(of: identity, at: address) {
            throw PoisonWatch.refusal(id: id, address: address, worker: link.worker)
        }
    }
}

extension RecordedRun.Origin {
    init(_ origin: EventOrigin) {
        switch origin {
        case .sent: self = .sent
        case .inline: self = .inline
        case .effect: self = .effect
        case .timer: self = .timer
        }
    }
}

extension Factory {
    /// The event of a dead letter as JSON; nil when it does not decode as this type's event
    /// (the type changed since). `redacted` for people (a listing): its ``Redacting`` form.
    func json(ofEvent event: [UInt8], binary: Bool, redacted: Bool) -> JSONValue? {
        guard let decoded = decode(event, binary: binary),
              let json = try? WireJSON.encode(redacted ? Redaction.redact(decoded) : decoded) else { return nil }
        return try? JSONValue(parsing: Data(json))
    }

    /// `record` without the first of its events (interrupted io, queued events, timers) that
    /// `identity` names; nil when it has none, or does not decode. An event of the machine's
    /// work (`fromWork`) found nowhere turns the record's re-issued io into interrupted io.
    func removing(_ identity: [UInt8], fromWork: Bool, from record: [UInt8]) -> [UInt8]? {
        guard var snapshot = try? decodeRecord(record) else { return nil }
        func matches(_ event: M.Event) -> Bool {
            RecordedRun.identity(encoding: { path.encodeEvent(event, &$0) }) == identity
        }
        if let index = snapshot.interruptedIO.firstIndex(where: { matches($0.event) }) {
            snapshot.interruptedIO.remove(at: index)
        } else if let index = snapshot.queuedEvents.firstIndex(where: matches) {
            snapshot.queuedEvents.remove(at: index)
        } else if let index = snapshot.timers.firstIndex(where: { matches($0.event) }) {
            snapshot.timers.remove(at: index)
        } else if fromWork, let reissued = snapshot.reissuedIO {
            snapshot.interruptedIO += reissued.map { .init(id: $0.id, event: $0.interrupted) }
            snapshot.reissuedIO = nil
        } else {
            return nil
        }
        return try? DurableRecord.encode(snapshot)
    }

    func eventCase(of event: [UInt8], binary: Bool) -> String? {
        decode(event, binary: binary).flatMap(Hosted<M>.eventCase(of:))
    }

    func canonical(event: [UInt8], binary: Bool) -> (event: [UInt8], binary: Bool)? {
        guard let decoded = decode(event, binary: binary) else { return nil }
        var bytes: [UInt8] = []
        guard let binary = path.encodeEvent(decoded, &bytes) else { return nil }
        return (bytes, binary)
    }

    /// An event in either codec, JSON in any form a client may send (a bare case name too).
    private func decode(_ event: [UInt8], binary: Bool) -> M.Event? {
        if binary { return try? path.decodeBinary(event[...]) }
        return try? Hosted<M>.decodeEvent(event[...], address: "a recorded event")
    }
}

/// The flight recorder's ``RunRecorder`` for each type name a ``Factory``'s instances are made
/// with (``Hosted/recording(type:in:path:)``): one per machine type and worker, which its hosts
/// share, instead of a closure and the box of what it captures per host.
final class SharedRecordings<M: Machine>: Sendable where M.State: Codable, M.Event: Codable, M.Output: Encodable {
    let path: HostedPath<M>
    private let byType = Mutex<[String: (flight: FlightRecorder, recording: RunRecorder<M>)]>([:])

    init(path: HostedPath<M>) {
        self.path = path
    }

    /// What the hosts of type `type` call around each event for `flight`, made at the first.
    /// The worker opens its flight recorder after its factories are bound, so it is told here.
    func recording(type: String, in flight: FlightRecorder) -> RunRecorder<M> {
        byType.withLock { made in
            if let kept = made[type], kept.flight === flight { return kept.recording }
            let recording = Hosted<M>.recording(type: type, in: flight, path: path)
            made[type] = (flight, recording)
            return recording
        }
    }
}
