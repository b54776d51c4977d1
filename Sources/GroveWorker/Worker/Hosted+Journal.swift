import Grove
import GroveRuntime
import GroveWire
import Synchronization

/// The ``JournalCursor`` of one `journal` instance, which its host's recorder moves on each
/// event. Touched on the worker's loop thread only; the lock is for the compiler's sake and is
/// never contended.
final class JournalTail: Sendable {
    private let cursor: Mutex<JournalCursor>

    init(_ cursor: JournalCursor) {
        self.cursor = Mutex(cursor)
    }

    func ran(_ event: [UInt8]?) {
        cursor.withLock { $0.ran(event) }
    }

    func write(holdsOnlyState: Bool, snapshotEvery: Int) -> JournalCursor.Write {
        cursor.withLock { $0.write(holdsOnlyState: holdsOnlyState, snapshotEvery: snapshotEvery) }
    }

    func recordNext() {
        cursor.withLock { $0.recordNext() }
    }

    func recordNotWritten(first: Bool, appended: Int) {
        cursor.withLock { $0.recordNotWritten(first: first, appended: appended) }
    }
}

extension Hosted {
    /// What the host at `address` calls around each event of a `journal` instance: the event
    /// (encoded once, the type's ``HostedPath/encodeEvent``, specialized) takes the next
    /// sequence in `tail`, and `flight` notes it as ``recording(_:type:in:path:)`` does.
    static func journaling(_ address: String, type: String, into tail: JournalTail, flight: FlightRecorder?,
                           path: HostedPath<M>) -> RunRecorder<M> {
        let encode = path.encodeEvent
        return RunRecorder(
            willRun: { _, event, origin, token in
                var encoded: [UInt8] = [0]
                let binary = encode(event, &encoded)
                if let binary { encoded[0] = RecordedRun.codecByte(binary: binary) }
                let identity = encoded
                tail.ran(binary == nil ? nil : identity)
                flight?.willRun(address: address, type: type, origin: RecordedRun.Origin(origin),
                                correlation: ReplyToken(raw: token).correlation) { bytes in
                    guard let binary else { return nil }
                    bytes += identity[1...]
                    return binary
                }
            },
            didRun: { flight?.didRun() })
    }
}

extension Factory {
    /// `snapshot` with the events of `journal` run on its state in order, as they ran, their
    /// effects not run: what ``JournalCursor`` appended them for (the instance then held nothing
    /// but its state), so the result holds nothing else either. Each is noted in `flight` as it
    /// runs, so that one that crashes the worker is quarantined as any other.
    ///
    /// Except the events it postponed (``MachineEffect/postpone``), which `step` says: one that
    /// postpones adds its event, one that changes the state's key delivers them again, and the
    /// journal holds those deliveries as events of their own (every event the host runs is
    /// journaled), so replay only forgets them. After a whole journal none are left (the
    /// instance held only its state); after a part of one (``skipping(_:record:journal:)``)
    /// the snapshot keeps those still postponed.
    /// - Throws: `unknown-machine` when an entry does not decode as this type's event.
    func replaying(_ journal: [JournalEntry], onto snapshot: Snapshot<M>, address: String, type: String = "",
                   flight: FlightRecorder?) throws(WireError) -> Snapshot<M> {
        guard !journal.isEmpty else { return snapshot }
        var state = snapshot.state
        var postponed = snapshot.postponed ?? []
        for entry in journal {
            let event = try journaledEvent(entry)
            flight?.willRun(address: address, type: type, origin: .journal) { bytes in
                bytes += entry.event[1...]
                return entry.event[0] == 1
            }
            let effect = M.step(&state, event: event)
            if effect.changesStateKey { postponed = [] } else if effect.postpones { postponed.append(event) }
            flight?.didRun()
        }
        var replayed = Snapshot<M>(state: state)
        replayed.postponed = postponed.isEmpty ? nil : postponed
        return replayed
    }

    /// `record` and its `journal` without the last journaled event `identity` names
    /// (``RecordedRun/identity``): the state before it (and the events then postponed), with
    /// the sequence of that event, so that recovery replays only the events after it. Nil when
    /// the journal has no such event.
    ///
    /// The last, since the run that crashed is the latest of those bytes: an event postponed
    /// and delivered again is journaled twice, and skipping the first (where it was postponed)
    /// would replay its delivery, the crash, again.
    func skipping(_ identity: [UInt8], record: MachineRecord, journal: [JournalEntry]) -> MachineRecord? {
        guard let index = journal.lastIndex(where: { $0.event == identity }),
              let snapshot = try? decodeRecord(record.snapshot) else { return nil }
        var start = Snapshot<M>(state: snapshot.state)
        start.postponed = snapshot.postponed
        guard let before = try? replaying(Array(journal[..<index]), onto: start, address: record.address, flight: nil),
              let bytes = try? DurableRecord.encode(before) else { return nil }
        var skipped = record
        skipped.snapshot = bytes
        skipped.sequence = journal[index].sequence
        return skipped
    }

    /// The event of a journal entry: a codec byte (1 binary, 2 JSON), then the event.
    private func journaledEvent(_ entry: JournalEntry) throws(WireError) -> M.Event {
        let what = "journal entry \(entry.sequence) of '\(entry.address)'"
        guard let codec = entry.event.first, codec == 1 || codec == 2 else {
            throw WireError(.unknownMachine, "\(what) starts with an unknown codec byte", address: entry.address)
        }
        do {
            if codec == 1 { return try path.decodeBinary(entry.event[1...]) }
            return try WireJSON.decode(M.Event.self, from: Array(entry.event[1...]), what: what)
        } catch {
            throw WireError(.unknownMachine, "\(what) does not decode as \(M.self).Event: \(error)", address: entry.address)
        }
    }
}
