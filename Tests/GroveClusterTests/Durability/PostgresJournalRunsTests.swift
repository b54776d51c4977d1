import Foundation
@testable import GroveCluster
@testable import GroveWorker
import PostgresNIO
import Testing

/// The journal as runs (format 2): one row per address per commit, read back entry by entry,
/// checked, truncated; a database of format 1 brought to format 2 when a store opens it.
@Suite(.timeLimit(.minutes(2)), .enabled(if: PostgresTestServer.isAvailable, PostgresTestServer.skipReason))
struct PostgresJournalRunsTests {
    typealias F = StoreFixtures

    private func open(_ topology: String, _ worker: String) throws -> PostgresMachineStore {
        try PostgresMachineStore(location: try #require(PostgresTestServer.location), topology: topology, worker: worker)
    }

    private func runs(of topology: String) throws -> Int {
        let rows = try PostgresTestServer.rows("SELECT count(*) FROM grove_journal_runs WHERE topology = \(topology)")
        return Int(try rows.first?.decode(Int64.self) ?? -1)
    }

    @Test func eachCommitWritesOneRowPerAddressAndReadsBackEntryByEntry() throws {
        let topology = PostgresTestServer.freshTopology()
        defer { PostgresTestServer.drop(topology) }
        let store = try open(topology, "main")
        defer { store.close() }
        try store.commit(F.commit(records: [F.record("counter/a", "3", sequence: 3), F.record("counter/b", "0")],
                                  journal: [F.entry("counter/a", 4), F.entry("counter/b", 1), F.entry("counter/a", 5)]))
        try store.commit(F.commit(journal: [F.entry("counter/a", 8), F.entry("counter/a", 6), F.entry("counter/a", 7)]))
        #expect(try runs(of: topology) == 3)
        #expect(try store.journal(of: "counter/a", after: 3) == (4...8).map { F.entry("counter/a", $0) })
        #expect(try store.journal(of: "counter/a", after: 6) == [F.entry("counter/a", 7), F.entry("counter/a", 8)])
        #expect(try store.journal(of: "counter/b", after: 0) == [F.entry("counter/b", 1)])

        // A truncation inside a run keeps the rest of it.
        try store.commit(F.commit(records: [F.record("counter/a", "6", sequence: 6)], truncations: [("counter/a", 6)]))
        #expect(try runs(of: topology) == 2)
        #expect(try store.journal(of: "counter/a", after: 0) == [F.entry("counter/a", 7), F.entry("counter/a", 8)])
        try store.commit(F.commit(records: [F.record("counter/a", "8", sequence: 8)], truncations: [("counter/a", 8)]))
        #expect(try runs(of: topology) == 1)
        #expect(try store.journal(of: "counter/a", after: 8) == [])
    }

    @Test func anEntryNotAfterTheLastIsRejectedWithTheWholeCommit() throws {
        let topology = PostgresTestServer.freshTopology()
        defer { PostgresTestServer.drop(topology) }
        let store = try open(topology, "main")
        defer { store.close() }
        try store.commit(F.commit(records: [F.record("counter/a", "0")], journal: [F.entry("counter/a", 1), F.entry("counter/a", 3)]))
        for sequence: UInt64 in [2, 3] {
            let error = #expect(throws: StoreError.self) {
                try store.commit(F.commit(records: [F.record("counter/b", "0")], journal: [F.entry("counter/a", sequence)]))
            }
            #expect(error?.code == .rejected, "\(error?.message ?? "")")
        }
        #expect(try store.records() == [F.record("counter/a", "0")])
        #expect(try store.journal(of: "counter/a", after: 0) == [F.entry("counter/a", 1), F.entry("counter/a", 3)])
    }

    @Test func aDatabaseOfFormatOneIsBroughtToTwoWithItsJournal() throws {
        let topology = PostgresTestServer.freshTopology()
        defer { PostgresTestServer.drop(topology) }
        try open(topology, "main").commit(F.commit(records: [F.record("counter/a", "1", sequence: 1)]))
        // As a Grove of format 1 leaves it: entries one per row in grove_journal.
        for sequence in 2...3 {
            _ = try PostgresTestServer.rows("""
                INSERT INTO grove_journal (topology, address, sequence, writer, event, time)
                VALUES (\(topology), 'counter/a', \(Int64(sequence)), 'main', \(ByteBuffer(string: "increment")), \(1_700_000_000_000 + Int64(sequence)))
                """)
        }
        let store = try open(topology, "main")
        defer { store.close() }
        #expect(try store.journal(of: "counter/a", after: 1) == [F.entry("counter/a", 2), F.entry("counter/a", 3)])
        let left = try PostgresTestServer.rows("SELECT count(*) FROM grove_journal WHERE topology = \(topology)")
        #expect(try left.first?.decode(Int64.self) == 0)
        let format = try PostgresTestServer.rows("SELECT max(format) FROM grove_format")
        #expect(try format.first?.decode(Int32.self) == Int32(PostgresMachineStore.format))
    }
}
