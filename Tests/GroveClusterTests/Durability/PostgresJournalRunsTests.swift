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

    /// Runs Grove never writes (what someone changing the tables could leave) are refused
    /// `corrupt`, naming the address and the run, never replayed twice or out of order.
    @Test func aTamperedRunIsRefusedByNameNotReplayed() throws {
        let topology = PostgresTestServer.freshTopology()
        defer { PostgresTestServer.drop(topology) }
        let store = try open(topology, "main")
        defer { store.close() }
        try store.commit(F.commit(records: [F.record("counter/a", "0")], journal: [F.entry("counter/a", 1), F.entry("counter/a", 2)]))
        // What is wrong, the run's key, its arrays; the run before ends at 2.
        let tampering: [(String, Int64, String)] = [
            ("overlaps the run before it", 3, "ARRAY[2, 3]::bigint[], ARRAY['x', 'y']::bytea[], ARRAY[1, 2]::bigint[]"),
            ("do not rise", 3, "ARRAY[4, 3]::bigint[], ARRAY['x', 'y']::bytea[], ARRAY[1, 2]::bigint[]"),
            ("not at its key", 5, "ARRAY[3, 4]::bigint[], ARRAY['x', 'y']::bytea[], ARRAY[1, 2]::bigint[]"),
            ("different lengths", 3, "ARRAY[3]::bigint[], ARRAY['x', 'y']::bytea[], ARRAY[1]::bigint[]"),
            ("NULL element", 3, "ARRAY[3]::bigint[], ARRAY['x']::bytea[], ARRAY[NULL]::bigint[]"),
        ]
        for (problem, last, arrays) in tampering {
            _ = try PostgresTestServer.rows(PostgresQuery(unsafeSQL: """
                INSERT INTO grove_journal_runs (topology, address, last, writer, sequences, events, times)
                VALUES ('\(topology)', 'counter/a', \(last), 'main', \(arrays))
                """))
            defer { _ = try? PostgresTestServer.rows("DELETE FROM grove_journal_runs WHERE topology = \(topology) AND last = \(last)") }
            let error = #expect(throws: StoreError.self) { try store.journal(of: "counter/a", after: 0) }
            #expect(error?.code == .corrupt, "\(problem): \(error?.message ?? "")")
            #expect(error?.message.contains("'counter/a' (last \(last))") == true, "\(error?.message ?? "")")
            #expect(error?.message.contains(problem) == true, "\(problem): \(error?.message ?? "")")
        }
        #expect(try store.journal(of: "counter/a", after: 0) == [F.entry("counter/a", 1), F.entry("counter/a", 2)])
    }

    /// Each topology moves its own format-1 entries when its workers open: an entry of another
    /// that clashes with a run refuses that topology, by name, not this one.
    @Test func anotherTopologysClashingEntryDoesNotKeepThisOneFromOpening() throws {
        let topology = PostgresTestServer.freshTopology(), other = PostgresTestServer.freshTopology()
        defer { PostgresTestServer.drop(topology); PostgresTestServer.drop(other) }
        try open(other, "main").commit(F.commit(records: [F.record("counter/a", "0")], journal: [F.entry("counter/a", 1)]))
        _ = try PostgresTestServer.rows("""
            INSERT INTO grove_journal (topology, address, sequence, writer, event, time)
            VALUES (\(other), 'counter/a', 1, 'main', \(ByteBuffer(string: "x")), 1)
            """)
        let store = try open(topology, "main")
        store.close()
        let error = #expect(throws: StoreError.self) { try open(other, "main") }
        #expect(error?.code == .corrupt, "\(error?.message ?? "")")
        #expect(error?.message.contains("topology '\(other)'") == true, "\(error?.message ?? "")")
        _ = try PostgresTestServer.rows("DELETE FROM grove_journal WHERE topology = \(other)")
    }
}
