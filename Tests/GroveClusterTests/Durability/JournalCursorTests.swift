@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
import Testing

/// What a `journal` instance writes at each group commit: its events, or its record in their
/// place (``JournalCursor``), fed as a hosted instance feeds it.
@Suite(.timeLimit(.minutes(2)))
struct JournalCursorTests {
    typealias Event = JournalCursor.JournalEvent

    static func event(_ sequence: UInt64) -> Event {
        Event(sequence: sequence, event: [2] + Array("\(sequence)".utf8))
    }

    /// Expects `cursor` to write `expected` now.
    static func expectWrite(_ cursor: inout JournalCursor, holdsOnlyState: Bool, snapshotEvery: Int, _ expected: JournalCursor.Write,
                            sourceLocation: SourceLocation = #_sourceLocation) {
        let written = cursor.write(holdsOnlyState: holdsOnlyState, snapshotEvery: snapshotEvery)
        #expect(written == expected, sourceLocation: sourceLocation)
    }

    /// Runs events `sequences` (each encoded as its number) on `cursor`.
    static func run(_ sequences: ClosedRange<UInt64>, on cursor: inout JournalCursor) {
        for sequence in sequences { cursor.ran(event(sequence).event) }
    }

    @Test func aNewInstanceWritesItsRecordFirstThenAppendsItsEventsInOrder() {
        var cursor = JournalCursor()
        Self.run(1...2, on: &cursor)
        // Until the store holds a record, recovery would not find the instance.
        Self.expectWrite(&cursor, holdsOnlyState: true, snapshotEvery: 100, .record(through: 2, first: true, events: [Self.event(1), Self.event(2)]))
        Self.run(3...5, on: &cursor)
        Self.expectWrite(&cursor, holdsOnlyState: true, snapshotEvery: 100, .append([Self.event(3), Self.event(4), Self.event(5)]))
        Self.run(6...6, on: &cursor)
        Self.expectWrite(&cursor, holdsOnlyState: true, snapshotEvery: 100, .append([Self.event(6)]))
        #expect(cursor.sequence == 6 && cursor.sinceRecord == 4)
    }

    @Test func everySnapshotEveryEventsTheRecordReplacesTheJournalThroughItsSequence() {
        var cursor = JournalCursor(recoveredThrough: 10, replayed: 0)
        Self.run(11...12, on: &cursor)
        Self.expectWrite(&cursor, holdsOnlyState: true, snapshotEvery: 3, .append([Self.event(11), Self.event(12)]))
        Self.run(13...14, on: &cursor)
        // 2 in the journal and 2 more make 4, at least 3: a record through 14, nothing appended.
        Self.expectWrite(&cursor, holdsOnlyState: true, snapshotEvery: 3, .record(through: 14, first: false, events: [Self.event(13), Self.event(14)]))
        #expect(cursor.sinceRecord == 0)
        Self.run(15...15, on: &cursor)
        Self.expectWrite(&cursor, holdsOnlyState: true, snapshotEvery: 3, .append([Self.event(15)]))
    }

    @Test func anInstanceHoldingMoreThanItsStateWritesItsRecord() {
        var cursor = JournalCursor(recoveredThrough: 5, replayed: 1)
        Self.run(6...6, on: &cursor)
        // A timer pending, io in flight or an event queued: replaying events cannot bring those back.
        Self.expectWrite(&cursor, holdsOnlyState: false, snapshotEvery: 100, .record(through: 6, first: false, events: [Self.event(6)]))
        // Changed without running an event (a timer cancelled by an admin, an event queued).
        Self.expectWrite(&cursor, holdsOnlyState: true, snapshotEvery: 100, .record(through: 6, first: false, events: []))
    }

    @Test func anEventThatDoesNotEncodeMakesTheNextWriteARecord() {
        var cursor = JournalCursor(recoveredThrough: 1, replayed: 0)
        cursor.ran(nil)
        Self.run(3...3, on: &cursor)
        Self.expectWrite(&cursor, holdsOnlyState: true, snapshotEvery: 100, .record(through: 3, first: false, events: [Self.event(3)]))
        Self.run(4...4, on: &cursor)
        Self.expectWrite(&cursor, holdsOnlyState: true, snapshotEvery: 100, .append([Self.event(4)]))
    }

    @Test func aRecoveredInstanceContinuesItsSequenceAndCountsTheReplayedEntries() {
        var cursor = JournalCursor(recoveredThrough: 40, replayed: 9)
        Self.run(41...41, on: &cursor)
        Self.expectWrite(&cursor, holdsOnlyState: true, snapshotEvery: 10, .record(through: 41, first: false, events: [Self.event(41)]))
    }

    @Test func aRecordThatDidNotEncodeLeavesTheCursorAsIfItsEventsWereAppended() {
        var stored = JournalCursor(recoveredThrough: 3, replayed: 0)
        Self.run(4...4, on: &stored)
        guard case .record(_, let first, let events) = stored.write(holdsOnlyState: false, snapshotEvery: 100) else {
            Issue.record("expected a record")
            return
        }
        stored.recordNotWritten(first: first, appended: events.count)
        #expect(stored.hasRecord && stored.sinceRecord == 1)

        var new = JournalCursor()
        Self.run(1...1, on: &new)
        _ = new.write(holdsOnlyState: true, snapshotEvery: 100)
        new.recordNotWritten(first: true, appended: 0)
        Self.run(2...2, on: &new)
        // Still no record stored: the next write is one again.
        Self.expectWrite(&new, holdsOnlyState: true, snapshotEvery: 100, .record(through: 2, first: true, events: [Self.event(2)]))
    }
}
