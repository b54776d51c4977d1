import Foundation
import GRDB
@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
import Testing

/// What only the SQLite store has: a file that outlasts the store, one process at a time, and
/// errors that name the file.
@Suite(.timeLimit(.minutes(2))) struct SQLiteMachineStoreTests {
    typealias F = StoreFixtures

    @Test func openCreatesTheDirectoryPrivateAndTheFileNamedAfterTheWorker() throws {
        let root = try F.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        let directory = root.appendingPathComponent("grove-data/default")
        let store = try SQLiteMachineStore.open(directory: directory.path, worker: "data-io-2")
        defer { store.close() }
        #expect(store.path == directory.appendingPathComponent("data-io-2.sqlite").path)
        #expect(FileManager.default.fileExists(atPath: store.path))
        let mode = try FileManager.default.attributesOfItem(atPath: directory.path)[.posixPermissions] as? Int
        #expect(mode == 0o700)
        try store.commit(F.commit(records: [F.record("a", "1")]))
        for file in [store.path, store.path + "-wal"] {
            let fileMode = try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int
            #expect(fileMode == 0o600, "\(file): \(String(fileMode ?? 0, radix: 8))")
        }
    }

    @Test func theDatabaseIsInWALMode() throws {
        let directory = try F.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try SQLiteMachineStore.open(directory: directory.path, worker: "main")
        try store.commit(F.commit(records: [F.record("a", "1")]))
        // Read through a connection of its own, as an admin's sqlite3 would (the lock file does
        // not keep readers out).
        var configuration = Configuration()
        configuration.readonly = true
        let reader = try DatabaseQueue(path: store.path, configuration: configuration)
        #expect(try reader.read { try String.fetchOne($0, sql: "PRAGMA journal_mode") } == "wal")
        #expect(try reader.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM machines") } == 1)
        try reader.close()
        store.close()
    }

    @Test func everythingOutlivesCloseAndReopen() throws {
        let directory = try F.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var store = try SQLiteMachineStore.open(directory: directory.path, worker: "main")
        try store.commit(F.commit(
            records: [F.record("counter/a", "3", sequence: 3)], journal: [F.entry("counter/a", 4)],
            deadLetters: [F.letter("counter/a")], flush: .disk))
        try store.commit(F.commit(records: [F.record("auth", "signed-in")]))
        let letters = try store.deadLetters()
        store.close()

        store = try SQLiteMachineStore.open(directory: directory.path, worker: "main")
        defer { store.close() }
        #expect(try store.records() == [F.record("auth", "signed-in"), F.record("counter/a", "3", sequence: 3)])
        #expect(try store.journal(of: "counter/a", after: 3) == [F.entry("counter/a", 4)])
        #expect(try store.deadLetters() == letters && letters.count == 1)
    }

    /// Records are bound by hand (``SQLiteRecordUpsert``): an empty snapshot is stored as an
    /// empty blob, not NULL, and a record written again replaces its row, in one commit or two.
    @Test func recordsBoundByHandReplaceTheirRowsAndKeepAnEmptySnapshot() throws {
        let directory = try F.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try SQLiteMachineStore.open(directory: directory.path, worker: "main")
        defer { store.close() }
        let empty = MachineRecord(address: "counter/é", type: "Counter", snapshot: [], sequence: 0)
        try store.commit(F.commit(records: [empty, F.record("counter/b", "1", sequence: 1)]))
        #expect(try store.record(of: "counter/é") == empty)
        let replaced = MachineRecord(address: "counter/é", type: "Tally", snapshot: [0, 1, 2], sequence: UInt64.max)
        try store.commit(F.commit(records: [F.record("counter/b", "2", sequence: 2), replaced]))
        #expect(try store.records() == [F.record("counter/b", "2", sequence: 2), replaced])
    }

    @Test func aSecondOpenerIsRefusedUntilTheFirstCloses() throws {
        let directory = try F.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let first = try SQLiteMachineStore.open(directory: directory.path, worker: "main")
        let error = #expect(throws: StoreError.self) { try SQLiteMachineStore.open(directory: directory.path, worker: "main") }
        #expect(error?.code == .locked)
        #expect(error?.message.contains(first.path) == true, "\(String(describing: error))")
        #expect(error?.message.contains("another worker named 'main' is running") == true, "\(String(describing: error))")
        #expect(error?.message.contains("process \(getpid())") == true, "\(String(describing: error))")
        // Another worker's store in the same directory is its own.
        let other = try SQLiteMachineStore.open(directory: directory.path, worker: "edge")
        other.close()

        first.close()
        let again = try SQLiteMachineStore.open(directory: directory.path, worker: "main")
        again.close()
    }

    @Test func aStoreClosedRefusesToBeUsed() throws {
        let directory = try F.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try SQLiteMachineStore.open(directory: directory.path, worker: "main")
        store.close()
        store.close()
        #expect(throws: StoreError("", code: .closed)) { try store.records() }
        #expect(throws: StoreError("", code: .closed)) { try store.commit(F.commit(records: [F.record("a", "1")])) }
    }

    /// A second release must not close the descriptor number again: by then the process may have
    /// handed it to something else. (A store whose open failed released its lock in init and
    /// again in deinit, closing a libzmq eventfd of another test and aborting the run.)
    @Test func aLockReleasedTwiceClosesItsDescriptorOnce() throws {
        let directory = try F.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let lock = try StoreLock(path: directory.appendingPathComponent("main.sqlite.lock").path, holder: "a test")
        lock.release()
        // Most often the number the lock had: the lowest free one.
        let other = open("/dev/null", O_RDONLY | O_CLOEXEC)
        try #require(other >= 0)
        defer { close(other) }
        lock.release()
        #expect(fcntl(other, F_GETFD) != -1, "the second release closed descriptor \(other)")
    }

    @Test func aFileFromANewerGroveIsRefusedNotMisread() throws {
        let directory = try F.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try SQLiteMachineStore.open(directory: directory.path, worker: "main")
        let path = store.path
        store.close()
        let newer = try DatabaseQueue(path: path)
        try newer.write { try $0.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES ('v99-from-the-future')") }
        try newer.close()

        let error = #expect(throws: StoreError.self) { try SQLiteMachineStore.open(directory: directory.path, worker: "main") }
        #expect(error?.code == .newerVersion)
        #expect(error?.message.contains(path) == true && error?.message.contains("newer Grove") == true, "\(String(describing: error))")
        // Refused without taking the lock for good.
        #expect(throws: StoreError("", code: .newerVersion)) { try SQLiteMachineStore.open(directory: directory.path, worker: "main") }
    }

    @Test func aFileThatIsNotADatabaseIsRefusedWithWhatToDo() throws {
        let directory = try F.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("main.sqlite")
        try Data(repeating: 0x47, count: 4096).write(to: path)
        let error = #expect(throws: StoreError.self) { try SQLiteMachineStore.open(directory: directory.path, worker: "main") }
        #expect(error?.code == .corrupt)
        #expect(error?.message.contains(path.path) == true && error?.message.contains("move it away") == true,
                "\(String(describing: error))")
    }

    @Test func aDataDirectoryThatCannotBeMadeIsNamed() throws {
        let directory = try F.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("a-file")
        try Data("x".utf8).write(to: file)
        let below = file.appendingPathComponent("grove-data").path
        let error = #expect(throws: StoreError.self) { try SQLiteMachineStore.open(directory: below, worker: "main") }
        #expect(error?.code == .permission)
        #expect(error?.message.contains(below) == true && error?.message.contains("data directory") == true,
                "\(String(describing: error))")
        #expect(throws: StoreError.self) { try SQLiteMachineStore.open(directory: file.path, worker: "main") }
    }

    @Test(arguments: ["", "a/b", "..", "."]) func aWorkerNameThatIsNoFileNameIsRefused(name: String) throws {
        let directory = try F.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        #expect(throws: StoreError.self) { try SQLiteMachineStore.open(directory: directory.path, worker: name) }
    }

    @Test func aDiskFlushSwitchesBackAndForth() throws {
        let directory = try F.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try SQLiteMachineStore.open(directory: directory.path, worker: "main")
        defer { store.close() }
        try store.commit(F.commit(records: [F.record("a", "1")], flush: .disk))
        try store.commit(F.commit(records: [F.record("a", "2")], flush: .process))
        try store.commit(F.commit(records: [F.record("b", "3")], flush: .disk))
        #expect(try store.records() == [F.record("a", "2"), F.record("b", "3")])
    }
}

/// Issue 21, the journal in append order on disk.
@Suite(.timeLimit(.minutes(2))) struct SQLiteJournalTests {
    typealias F = StoreFixtures

    static func rows(_ path: String) throws -> Int {
        var configuration = Configuration()
        configuration.readonly = true
        let reader = try DatabaseQueue(path: path, configuration: configuration)
        defer { try? reader.close() }
        return try reader.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM journal") } ?? -1
    }

    @Test func rowsNoMachineNeedsAreDeletedAndTheLiveOnesComeBackAfterAReopen() throws {
        let directory = try F.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var store = try SQLiteMachineStore.open(directory: directory.path, worker: "main")
        // Ten machines, an event each per commit; a record every 5 events truncates their journals.
        let commits = SQLiteMachineStore.commitsPerLookup * 2
        for sequence in UInt64(1)...UInt64(commits) {
            let addresses = (0..<10).map { "m/\($0)" }
            var records: [MachineRecord] = []
            var truncations: [(String, UInt64)] = []
            if sequence % 5 == 0 {
                records = addresses.map { F.record($0, "\(sequence)", sequence: sequence) }
                truncations = addresses.map { ($0, sequence) }
            }
            try store.commit(F.commit(records: records, journal: addresses.map { F.entry($0, sequence) }, truncations: truncations))
        }
        let path = store.path
        // Last record at 125, events 126...128 live: 30 rows; the deletion at commit 128 ran
        // before that commit's truncations, so some dead rows may wait for the next.
        let kept = try Self.rows(path)
        #expect(kept >= 30 && kept <= 30 + 10 * 5, "\(kept) rows kept of \(commits * 10)")
        #expect(try store.journal(of: "m/3", after: 125).map(\.sequence) == [126, 127, 128])
        store.close()

        store = try SQLiteMachineStore.open(directory: directory.path, worker: "main")
        defer { store.close() }
        #expect(try store.journal(of: "m/3", after: 125).map(\.sequence) == [126, 127, 128])
        #expect(try store.journal(of: "m/3", after: 127).map(\.sequence) == [128])
        try store.commit(F.commit(journal: [F.entry("m/3", 129)]))
        #expect(try store.journal(of: "m/3", after: 125).map(\.sequence) == [126, 127, 128, 129])
        #expect(throws: StoreError("", code: .rejected)) { try store.commit(F.commit(journal: [F.entry("m/3", 129)])) }
    }

    /// Many rows freed at once (an idle machine's 5,000 entries, dead once it writes its
    /// record) go a few per commit, at most twice the commit's own rows and
    /// `rowsDeletedPerCommit` more, never in one long delete.
    @Test func rowsFreedAtOnceAreDeletedAFewPerCommit() throws {
        let directory = try F.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try SQLiteMachineStore.open(directory: directory.path, worker: "main")
        defer { store.close() }
        try store.commit(F.commit(journal: (1...5000).map { F.entry("idle", $0) }))
        try store.commit(F.commit(records: [F.record("idle", "5000", sequence: 5000)], truncations: [("idle", 5000)]))
        // Commits of one event each to a busy machine; the oldest live entry is looked for at
        // the 64th commit, then each commit deletes at most 2 + 1,024 dead rows.
        var rows = [try Self.rows(store.path)]
        for sequence in UInt64(1)...UInt64(SQLiteMachineStore.commitsPerLookup + 6) {
            try store.commit(F.commit(journal: [F.entry("busy", sequence)]))
            rows.append(try Self.rows(store.path))
        }
        let deleted = zip(rows, rows.dropFirst()).map { before, after in before + 1 - after }
        let limit = 2 + SQLiteMachineStore.rowsDeletedPerCommit
        #expect(deleted.allSatisfy { $0 <= limit }, "rows deleted per commit: \(deleted)")
        // All 5,000 gone within five commits of the look, the busy machine's 70 rows kept.
        #expect(deleted.filter { $0 > 0 }.count == 5, "rows deleted per commit: \(deleted)")
        #expect(rows.last == SQLiteMachineStore.commitsPerLookup + 6)
        #expect(try store.journal(of: "busy", after: 0).count == SQLiteMachineStore.commitsPerLookup + 6)
    }

    @Test func aStoreOfTheEarlierLayoutKeepsItsJournal() throws {
        let directory = try F.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("main.sqlite").path
        // The tables as v1 and v2 made them, with a record and its journal.
        let earlier = try DatabaseQueue(path: path)
        try earlier.write { db in
            try db.execute(sql: """
                CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY);
                INSERT INTO grdb_migrations (identifier) VALUES ('v1'), ('v2');
                CREATE TABLE machines (address TEXT NOT NULL PRIMARY KEY, type TEXT NOT NULL, snapshot BLOB NOT NULL,
                                       sequence INTEGER NOT NULL);
                CREATE TABLE journal (address TEXT NOT NULL, sequence INTEGER NOT NULL, event BLOB NOT NULL,
                                      time INTEGER NOT NULL, PRIMARY KEY (address, sequence)) WITHOUT ROWID;
                CREATE TABLE dead_letters (id INTEGER PRIMARY KEY AUTOINCREMENT, address TEXT NOT NULL, type TEXT NOT NULL,
                                           event BLOB NOT NULL, binary INTEGER NOT NULL, error TEXT NOT NULL,
                                           crashes INTEGER NOT NULL, time INTEGER NOT NULL);
                CREATE TABLE crashes (address TEXT NOT NULL, event BLOB NOT NULL, count INTEGER NOT NULL, time INTEGER NOT NULL,
                                      PRIMARY KEY (address, event)) WITHOUT ROWID;
                INSERT INTO machines VALUES ('b', 'Counter', x'31', 1), ('a', 'Counter', x'32', 0);
                INSERT INTO journal VALUES ('b', 3, x'62', 0), ('a', 1, x'61', 0), ('b', 2, x'62', 0), ('b', 1, x'62', 0);
                """)
        }
        try earlier.close()
        let store = try SQLiteMachineStore.open(directory: directory.path, worker: "main")
        defer { store.close() }
        #expect(try store.journal(of: "b", after: 1).map(\.sequence) == [2, 3])
        #expect(try store.journal(of: "a", after: 0).map(\.sequence) == [1])
        try store.commit(F.commit(journal: [F.entry("b", 4)]))
        #expect(try store.journal(of: "b", after: 1).map(\.sequence) == [2, 3, 4])
    }

    @Test func machinesHoldingBackMostlyDeadRowsAreNamedForARecord() throws {
        let directory = try F.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try SQLiteMachineStore.open(directory: directory.path, worker: "main", laggardSlack: 50)
        defer { store.close() }
        try store.commit(F.commit(records: [F.record("idle", "0")], journal: [F.entry("idle", 1)]))
        #expect(store.journalLaggards(limit: 10) == [])
        for sequence in UInt64(1)...100 {
            try store.commit(F.commit(records: [F.record("busy", "\(sequence)", sequence: sequence)], journal: [F.entry("busy", sequence)],
                                      truncations: [("busy", sequence)]))
        }
        #expect(store.journalLaggards(limit: 10) == ["idle"])
        try store.commit(F.commit(records: [F.record("idle", "1", sequence: 1)], truncations: [("idle", 1)]))
        #expect(store.journalLaggards(limit: 10) == [])
    }
}
