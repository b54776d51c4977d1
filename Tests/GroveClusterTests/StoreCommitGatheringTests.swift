@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
import GroveWire
import Testing

/// How one turn's durable writes become one group commit, without a store or a worker.
@Suite(.timeLimit(.minutes(2)))
struct StoreCommitGatheringTests {
    func record(_ address: String, sequence: UInt64 = 0) -> MachineRecord {
        MachineRecord(address: address, type: "LedgerMachine", snapshot: Array(address.utf8), sequence: sequence)
    }

    @Test func recordsJournalsAndEndingsMakeOneCommit() {
        var asked = 0
        let writes = [
            DurableWrite(address: "tally", record: record("tally")),
            DurableWrite(address: "ledger", journal: [.init(sequence: 4, event: [1]), .init(sequence: 5, event: [2])]),
            DurableWrite(address: "ledgers/a", record: record("ledgers/a", sequence: 7), replacesStored: true),
            DurableWrite(address: "ledgers/b", journal: [.init(sequence: 1, event: [3])]),
        ]
        let (commit, failures) = StoreCommit.gathering(writes, ended: ["gone", "tally"], flush: .disk) {
            asked += 1
            return 1_700_000_000_000
        }
        #expect(failures.isEmpty)
        #expect(commit.flush == .disk)
        #expect(commit.records.map(\.address) == ["tally", "ledgers/a"])
        #expect(commit.journal.map { "\($0.address)#\($0.sequence)" } == ["ledger#4", "ledger#5", "ledgers/b#1"])
        #expect(commit.journal.allSatisfy { $0.time == 1_700_000_000_000 } && commit.journal.count == 3)
        #expect(asked == 1, "the clock is read once per commit")
        #expect(commit.truncations.map { "\($0.address)@\($0.through)" } == ["ledgers/a@7"], "a record covers its journal")
        // A journal instance's first record replaces what an earlier life stored; an instance
        // that ended goes, unless it wrote a record in this very turn.
        #expect(commit.removed == ["ledgers/a", "gone"])
    }

    @Test func aCommitWithoutJournalEntriesDoesNotReadTheClock() {
        let (commit, _) = StoreCommit.gathering([DurableWrite(address: "tally", record: record("tally"))], ended: [], flush: .process) {
            Issue.record("the clock was read")
            return 0
        }
        #expect(commit.records.count == 1 && commit.journal.isEmpty && commit.removed.isEmpty)
    }

    @Test func aRecordThatCouldNotBeWrittenIsLoggedWithWhatTheStoreKeeps() {
        let failure = WireError(.unencodableState, "tally's state does not encode")
        let (commit, failures) = StoreCommit.gathering([
            DurableWrite(address: "tally", failure: failure),
            DurableWrite(address: "ledger", journal: [.init(sequence: 2, event: [9])], failure: failure),
        ], ended: [], flush: .process) { 5 }
        #expect(failures == ["tally's state does not encode; its last stored record stays",
                             "tally's state does not encode; its events are journaled on its last stored record"])
        #expect(commit.records.isEmpty && commit.journal.count == 1)
    }
}
