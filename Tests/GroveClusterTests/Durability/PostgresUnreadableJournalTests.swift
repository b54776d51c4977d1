@testable import GroveCluster
@testable import GroveWorker
import GroveWire
import PostgresNIO
import Testing

/// A journal run the PostgreSQL store refuses as `corrupt` (tampered with) costs its instance
/// only, on a worker with a real PostgreSQL store: its requests get `unreadable-record` naming
/// the store (without a password) and the run, the run stays in the database, the worker's
/// other instances are served.
@Suite(.timeLimit(.minutes(2)), .enabled(if: PostgresTestServer.isAvailable, PostgresTestServer.skipReason))
struct PostgresUnreadableJournalTests {
    @Test func aTamperedRunRefusesItsInstanceOnlyAndStaysInTheDatabase() async throws {
        let topology = PostgresTestServer.freshTopology()
        defer { PostgresTestServer.drop(topology) }
        let location = try #require(PostgresTestServer.location)
        let cluster = InMemoryCluster(topology: JournalWorkerTests.topology)
        let firstStore = try PostgresMachineStore(location: location, topology: topology, worker: "w")
        let (first, killFirst) = try JournalWorkerTests.worker(firstStore)
        try await JournalWorkerTests.start(first, in: cluster)
        #expect(try await JournalWorkerTests.add(7, to: "ledgers/x", cluster, first, correlation: 1) == #"{"total":7}"#)
        #expect(try await JournalWorkerTests.add(8, to: "ledgers/x", cluster, first, correlation: 2) == #"{"total":15}"#)
        #expect(try await JournalWorkerTests.add(1, to: "ledger", cluster, first, correlation: 3) == #"{"total":1}"#)
        killFirst()
        firstStore.close()
        // A run no worker writes: it overlaps the one before it (which ends at 2).
        _ = try PostgresTestServer.rows(PostgresQuery(unsafeSQL: """
            INSERT INTO grove_journal_runs (topology, address, last, writer, sequences, events, times)
            VALUES ('\(topology)', 'ledgers/x', 3, 'w', ARRAY[2, 3]::bigint[], ARRAY['x', 'y']::bytea[], ARRAY[1, 2]::bigint[])
            """))

        let secondStore = try PostgresMachineStore(location: location, topology: topology, worker: "w")
        defer { secondStore.close() }
        let (second, killSecond) = try JournalWorkerTests.worker(secondStore)
        defer { killSecond() }
        try await JournalWorkerTests.start(second, in: cluster)
        #expect(try await JournalWorkerTests.add(100, to: "ledger", cluster, second, correlation: 4) == #"{"total":101}"#)
        let reply = try await JournalWorkerTests.add(100, to: "ledgers/x", cluster, second, correlation: 5)
        let error = try WireJSON.decode(WireError.self, from: Array(reply.utf8))
        #expect(error.code == .unreadableRecord && error.address == "ledgers/x", "\(reply)")
        #expect(error.message.contains("the PostgreSQL store at \(location)") && error.message.contains("overlaps the run before it"),
                "\(error.message)")
        #expect(location.password.map { !error.message.contains($0) } ?? true, "the password is never told")
        let runs = try PostgresTestServer.rows("SELECT count(*) FROM grove_journal_runs WHERE topology = \(topology) AND address = 'ledgers/x'")
        #expect(try runs.first?.decode(Int64.self) == 2, "the tampered run is left as it was")
    }
}
