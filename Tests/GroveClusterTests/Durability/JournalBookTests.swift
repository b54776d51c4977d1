@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
import Testing

/// Issue 21, the journal in append order: where each machine's live entries are, which rows
/// can be deleted, and which machines hold deletable space back.
@Suite(.timeLimit(.minutes(2))) struct JournalBookTests {
    @Test func appendedEntriesTakeTheNextPositionsAndAreReadBackByAddress() {
        var book = JournalBook()
        #expect(book.append("a", sequence: 1) == 1)
        #expect(book.append("b", sequence: 1) == 2)
        #expect(book.append("a", sequence: 2) == 3)
        #expect(book.positions(of: "a", after: 0) == [1, 3])
        #expect(book.positions(of: "a", after: 1) == [3])
        #expect(book.positions(of: "b", after: 0) == [2])
        #expect(book.positions(of: "c", after: 0) == [])
        #expect(book.liveCount == 3)
    }

    @Test func anEntryNotAfterTheLastOfItsAddressIsRefused() {
        var book = JournalBook()
        _ = book.append("a", sequence: 2)
        #expect(book.append("a", sequence: 2) == nil)
        #expect(book.append("a", sequence: 1) == nil)
        #expect(book.append("b", sequence: 1) == 2, "another address is not affected")
        #expect(book.liveCount == 2)
    }

    @Test func truncatingAndRemovingFreeTheOldestRows() {
        var book = JournalBook()
        for sequence in UInt64(1)...3 {
            _ = book.append("a", sequence: sequence)  // positions 1, 3, 5
            _ = book.append("b", sequence: sequence)  // positions 2, 4, 6
        }
        #expect(book.oldestNeeded == 1)
        book.truncate("a", through: 2)
        #expect(book.positions(of: "a", after: 0) == [5])
        #expect(book.oldestNeeded == 2, "b's first entry holds row 2")
        book.remove("b")
        #expect(book.oldestNeeded == 5)
        book.truncate("a", through: 3)
        #expect(book.oldestNeeded == 7, "nothing live: every row can go")
        #expect(book.liveCount == 0)
        #expect(book.deadRows == 6)
        book.deleted(below: 7)
        #expect(book.deadRows == 0)
    }

    @Test func rowsFoundOnOpeningAreLiveOnlyAfterTheirRecord() {
        var book = JournalBook()
        book.found(position: 10, address: "a", sequence: 4, recordSequence: 5)
        book.found(position: 11, address: "a", sequence: 6, recordSequence: 5)
        book.found(position: 12, address: "orphan", sequence: 1, recordSequence: nil)
        book.found(position: 13, address: "b", sequence: 1, recordSequence: 0)
        #expect(book.keptFrom == 10 && book.next == 14)
        #expect(book.positions(of: "a", after: 5) == [11])
        #expect(book.positions(of: "orphan", after: 0) == [])
        #expect(book.positions(of: "b", after: 0) == [13])
        #expect(book.oldestNeeded == 11)
        #expect(book.deadRows == 2)
        #expect(book.append("a", sequence: 7) == 14)
    }

    @Test func machinesWhoseOldEntriesHoldBackMostlyDeadRowsAreLaggards() {
        var book = JournalBook()
        _ = book.append("idle", sequence: 1)
        _ = book.append("quiet", sequence: 1)
        for sequence in UInt64(1)...20 {
            _ = book.append("busy", sequence: sequence)
            book.truncate("busy", through: sequence)
        }
        #expect(book.deadRows == 20 && book.liveCount == 2)
        #expect(book.laggards(limit: 5, slack: 100) == [], "dead rows under the slack")
        #expect(book.laggards(limit: 5, slack: 10) == ["idle", "quiet"], "oldest first")
        #expect(book.laggards(limit: 1, slack: 10) == ["idle"])
        book.truncate("idle", through: 1)
        #expect(book.laggards(limit: 5, slack: 10) == ["quiet"])
    }
}
