import Foundation
import GRDB
import GroveWire
import GroveCluster
import Synchronization

/// The embedded machine store: one SQLite database per worker, `<directory>/<worker>.sqlite`,
/// through GRDB, in WAL mode. One ``commit(_:)`` is one transaction (a group commit: everything a
/// received batch changed), with cached prepared statements.
///
/// `StoreFlush.process` commits with `synchronous = NORMAL`: the WAL is written, not synced, so a
/// commit survives the worker being killed but not the host losing power; `.disk` commits with
/// `synchronous = FULL`, one fsync per commit. A lock file beside the database (``StoreLock``)
/// keeps a second process from opening it.
///
/// ```swift
/// let store = try SQLiteMachineStore.open(directory: "grove-data/default", worker: "main")
/// var commit = StoreCommit()
/// commit.records = [MachineRecord(address: "counter/a", type: "Counter", snapshot: bytes)]
/// try store.commit(commit)
/// ```
package final class SQLiteMachineStore: MachineStore {
    /// The database file.
    package let path: String

    package var label: String { "the SQLite store \(path)" }
    private let database: DatabaseQueue
    private let lock: StoreLock
    private let state = Mutex(Connection())
    /// Where each machine's live journal entries sit; a commit that fails reads it again.
    private let book = Mutex(JournalBook())
    private let laggardSlack: Int64

    private struct Connection {
        /// What `PRAGMA synchronous` is set to now.
        var flush = StoreFlush.process
        var closed = false
        /// Commits since the oldest live journal entry was last looked for.
        var commitsSinceLookup = 0
        /// The journal's rows below this position are needed by no machine: each commit
        /// deletes a few of them, at the table's old end.
        var deleteBelow: Int64 = 0
    }

    /// Commits between two looks for the oldest live journal entry over every machine (a walk
    /// over all of them): rows below it can go.
    static let commitsPerLookup = 64

    /// Rows no machine needs deleted per commit, at most: twice the rows the commit appends,
    /// and this many more. One range delete of every such row at once took 0.5–0.8 s under
    /// load (hundreds of thousands of rows when idle machines wrote their records), holding
    /// the worker's loop and its replies; a few per commit keep ahead of the appends.
    static let rowsDeletedPerCommit = 1024

    /// Opens (creating when missing) the store of the worker named `worker` in `directory`:
    /// `<directory>/<worker>.sqlite`. The directory is created with mode 0700 (snapshots hold
    /// machine state, secrets included), and refused when it is a symbolic link, another user's
    /// or open to group or others (``PrivateDirectory``); the files are opened without
    /// following links, and refused when another user's (``PrivateFile``). A worker calls this only once a welcome places a durable
    /// machine on it, so that topologies without durability never create a file.
    /// - Parameters:
    ///   - directory: The data directory, e.g. `grove-data/default`.
    ///   - worker: The worker instance name, e.g. `data-io-2`.
    ///   - laggardSlack: Dead journal rows tolerated, beyond as many as are live, before
    ///     ``journalLaggards(limit:)`` names machines whose old entries hold them back.
    /// - Throws: ``StoreError``: `locked` when another process (a worker with the same name) has
    ///   the store open; `permission` (a refused directory or file included), `full`, `corrupt`
    ///   or `newerVersion` with what to do.
    package static func open(directory: String, worker: String,
                             laggardSlack: Int64 = defaultLaggardSlack) throws(StoreError) -> SQLiteMachineStore {
        guard !worker.isEmpty, !worker.contains("/"), worker != ".", worker != ".." else {
            throw StoreError("'\(worker)' cannot name a store file; give the worker a name without '/'", code: .failed)
        }
        try createDirectory(directory)
        let path = URL(fileURLWithPath: directory).appendingPathComponent("\(worker).sqlite").path
        return try SQLiteMachineStore(path: path, holder: "another worker named '\(worker)'", laggardSlack: laggardSlack)
    }

    /// Opens (creating when missing) the store at `path`; its directory must exist.
    /// - Parameters:
    ///   - path: The database file.
    ///   - holder: Who a second opener is told holds it.
    ///   - laggardSlack: As ``open(directory:worker:laggardSlack:)``.
    /// - Throws: ``StoreError``, as ``open(directory:worker:laggardSlack:)``.
    package init(path: String, holder: String = "another worker with the same name",
                 laggardSlack: Int64 = defaultLaggardSlack) throws(StoreError) {
        self.path = path
        self.laggardSlack = laggardSlack
        lock = try StoreLock(path: path + ".lock", holder: holder)
        // Readable by the worker's user only: records hold machine state, secrets included.
        // SQLite gives the -wal and -shm files the database file's mode. Not through a link,
        // and none of another user's: SQLite opens these by their paths, so they are looked at
        // first (in a directory of this user's alone, nobody else can change them after).
        do {
            let descriptor = try PrivateFile.open(path, flags: O_CREAT | O_RDWR)
            Glibc.close(descriptor)
            for companion in [path + "-wal", path + "-shm"] { try PrivateFile.check(companion) }
        } catch let error as PrivateFile.OpenError {
            lock.release()
            throw StoreError.opening(path, error, what: "the store")
        } catch let refusal as PrivateDirectory.Refusal {
            lock.release()
            throw StoreError.refused(refusal)
        } catch {
            lock.release()
            throw StoreError("cannot open the store \(path): \(error)", code: .failed)
        }
        var configuration = Configuration()
        configuration.journalMode = .wal   // also sets synchronous = NORMAL
        configuration.busyMode = .timeout(2)
        configuration.label = "grove.store"
        do {
            database = try DatabaseQueue(path: path, configuration: configuration)
        } catch {
            lock.release()
            throw StoreError.fromSQLite(error, path: path, doing: "open")
        }
        do {
            try prepareSchema()
            try readJournalBook()
        } catch {
            // Fully initialized, so deinit runs after this throw: close here, once.
            close()
            throw error
        }
    }

    deinit {
        close()
    }

    /// Closes the database and releases the lock; later calls throw `closed`. Safe to call twice.
    package func close() {
        let wasOpen = state.withLock { connection in
            defer { connection.closed = true }
            return !connection.closed
        }
        guard wasOpen else { return }
        try? database.close()
        lock.release()
    }

    private func prepareSchema() throws(StoreError) {
        let migrator = Self.migrator
        let superseded: Bool
        do {
            superseded = try database.read { try migrator.hasBeenSuperseded($0) }
        } catch {
            throw StoreError.fromSQLite(error, path: path, doing: "read the format of")
        }
        if superseded {
            throw StoreError(
                "\(path) was written by a newer Grove, whose format this one does not know: run that Grove's workers, or "
                    + "move the file away to start afresh (its machines then start from their initial state)",
                code: .newerVersion)
        }
        do {
            try migrator.migrate(database)
        } catch {
            throw StoreError.fromSQLite(error, path: path, doing: "create the tables of")
        }
    }

    /// Finds where each machine's live journal entries are: one scan of the journal's positions,
    /// addresses and sequences (not its events), against the records' sequences.
    private func readJournalBook() throws(StoreError) {
        let found = try read("read the journal of") { db in
            var recorded: [String: UInt64] = [:]
            for row in try Row.fetchAll(db.cachedStatement(sql: SQL.recordSequences)) {
                recorded[row[0]] = UInt64(bitPattern: row[1])
            }
            var book = JournalBook()
            let rows = try Row.fetchCursor(db.cachedStatement(sql: SQL.journalRows))
            while let row = try rows.next() {
                let address: String = row[1]
                book.found(position: row[0], address: address, sequence: UInt64(bitPattern: row[2]), recordSequence: recorded[address])
            }
            return book
        }
        book.withLock { $0 = found }
    }

    /// Creates the data directory (mode 0700) when it is missing, and refuses one that is not
    /// this user's alone; the flight recorder's file goes there too.
    static func createDirectory(_ directory: String) throws(StoreError) {
        do throws(PrivateDirectory.Refusal) {
            try PrivateDirectory.prepare(directory)
        } catch {
            if case .cannotCreate(let code) = error.problem { throw StoreError.fromErrno(code, doing: "create the data directory \(error.path)") }
            throw StoreError.refused(error)
        }
    }

    // MARK: - MachineStore

    package func commit(_ commit: StoreCommit) throws(StoreError) {
        guard !commit.isEmpty else { return }
        let connection = try openConnection()
        let lookingUp = connection.commitsSinceLookup + 1 >= Self.commitsPerLookup
        var deleteBelow = connection.deleteBelow
        // The book is changed in place, under its lock: a copy of it (to keep the old one for a
        // rollback) shared each address's entries, and the first append of a commit to an
        // address copied all of them (a tenth of a journal worker's CPU under load).
        let failure: StoreError? = book.withLock { book in
            do {
                try database.writeWithoutTransaction { db in
                    if connection.flush != commit.flush {
                        try db.execute(sql: commit.flush == .disk ? "PRAGMA synchronous = FULL" : "PRAGMA synchronous = NORMAL")
                        state.withLock { $0.flush = commit.flush }
                    }
                    try db.inTransaction(.immediate) {
                        try Self.write(commit, in: db, book: &book)
                        if lookingUp { deleteBelow = book.oldestNeeded }
                        try Self.deleteUnneededJournal(in: db, book: &book, below: deleteBelow,
                                                       atMost: 2 * Int64(commit.journal.count) + Int64(Self.rowsDeletedPerCommit))
                        return .commit
                    }
                }
                return nil
            } catch {
                return StoreError.fromSQLite(error, path: path, doing: "commit to")
            }
        }
        if let failure {
            // The transaction was rolled back and the book was not: it is read again from the
            // table, which holds what it held before the commit.
            try? readJournalBook()
            throw failure
        }
        state.withLock { connection in
            connection.commitsSinceLookup = lookingUp ? 0 : connection.commitsSinceLookup + 1
            connection.deleteBelow = deleteBelow
        }
    }

    /// Deletes at most `rows` of the journal's rows below `target`, which no machine needs
    /// (the oldest live entry only moves up: a target found earlier is still safe).
    private static func deleteUnneededJournal(in db: Database, book: inout JournalBook, below target: Int64, atMost rows: Int64) throws {
        let below = min(target, book.keptFrom + rows)
        guard below > book.keptFrom else { return }
        try db.cachedStatement(sql: SQL.deleteJournal).execute(arguments: [below])
        book.deleted(below: below)
    }

    private static func write(_ commit: StoreCommit, in db: Database, book: inout JournalBook) throws {
        if !commit.removed.isEmpty {
            let record = try db.cachedStatement(sql: SQL.removeRecord)
            let answers = try db.cachedStatement(sql: SQL.removeAnswers)
            for address in commit.removed {
                try record.execute(arguments: [address])
                try answers.execute(arguments: [address])
                book.remove(address)  // its rows go with the next deletion
            }
        }
        if !commit.records.isEmpty {
            let upsert = try SQLiteRecordUpsert(in: db)
            for record in commit.records { try upsert.upsert(record) }
        }
        if !commit.journal.isEmpty {
            let append = try SQLiteJournalAppend(in: db)
            for entry in commit.journal {
                guard let position = book.append(entry.address, sequence: entry.sequence) else {
                    throw StoreError("journal entry \(entry.sequence) of \(entry.address) is not after its last one; "
                                     + "the commit was rolled back: the worker's journal cursor is out of step (a Grove bug)", code: .rejected)
                }
                try append.append(position: position, address: entry.address, sequence: entry.sequence, event: entry.event, time: entry.time)
            }
        }
        for truncation in commit.truncations {
            book.truncate(truncation.address, through: truncation.through)  // its rows go with the next deletion
        }
        if !commit.deadLetters.isEmpty {
            let insert = try db.cachedStatement(sql: SQL.insertDeadLetter)
            for letter in commit.deadLetters {
                try insert.execute(arguments: [
                    letter.address, letter.type, Data(letter.event), letter.binary, letter.error, letter.crashes, letter.time,
                ])
            }
        }
        if !commit.forgottenAnswers.isEmpty {
            let forget = try db.cachedStatement(sql: SQL.forgetAnswer)
            for (address, key) in commit.forgottenAnswers {
                try forget.execute(arguments: [address, Data(key.client), Int64(bitPattern: key.sequence)])
            }
        }
        if !commit.answers.isEmpty {
            let upsert = try db.cachedStatement(sql: SQL.upsertAnswer)
            for (address, entry) in commit.answers {
                try upsert.execute(arguments: [
                    address, Data(entry.key.client), Int64(bitPattern: entry.key.sequence), Int64(bitPattern: entry.slot),
                    Int64(entry.answer.kind.rawValue), Int64(entry.answer.flags.rawValue), Data(entry.answer.payload),
                ])
            }
        }
    }

    package func answers(of address: String) throws(StoreError) -> [AnswerEntry] {
        try read("read the kept answers of") { db in
            try Row.fetchAll(db.cachedStatement(sql: SQL.answers), arguments: [address]).compactMap { row in
                let kind: Int64 = row[3], flags: Int64 = row[4]
                let client = Self.bytes(row[0])
                guard let kind = MessageKind(rawValue: UInt8(truncatingIfNeeded: kind)),
                      (1...IdempotencyKey.maximumBoundClientLength).contains(client.count) else { return nil }
                return AnswerEntry(key: IdempotencyKey(client: client, sequence: UInt64(bitPattern: row[1])),
                                   slot: UInt64(bitPattern: row[2]),
                                   answer: KeptAnswer(kind: kind, flags: Header.Flags(rawValue: UInt8(truncatingIfNeeded: flags)),
                                                      payload: Self.bytes(row[5])))
            }
        }
    }

    package func records() throws(StoreError) -> [MachineRecord] {
        try read("read the machines of") { db in
            try Row.fetchAll(db.cachedStatement(sql: SQL.records)).map { row in
                MachineRecord(address: row[0], type: row[1], snapshot: Self.bytes(row[2]), sequence: UInt64(bitPattern: row[3]))
            }
        }
    }

    package func records(leavingResting resting: Set<String>) throws(StoreError) -> [MachineRecord] {
        guard !resting.isEmpty else { return try records() }
        // An open bound: the empty string below every address, a blob above every text (SQLite
        // orders text before blobs).
        let gaps = KeyedRange.gaps(around: resting)
        var arguments = StatementArguments()
        for gap in gaps {
            arguments += [gap.from ?? ""]
            arguments += [gap.to.map { $0.databaseValue } ?? Data([0xFF]).databaseValue]
        }
        return try read("read the machines to run of") { db in
            try Row.fetchAll(db.cachedStatement(sql: SQL.records(outside: gaps.count)), arguments: arguments).map { row in
                MachineRecord(address: row[0], type: row[1], snapshot: Self.bytes(row[2]), sequence: UInt64(bitPattern: row[3]))
            }
        }
    }

    package func keyedInstances(of machine: String) throws(StoreError) -> [StoredInstance] {
        let range = KeyedRange(machine)
        return try read("list the instances of") { db in
            try Row.fetchAll(db.cachedStatement(sql: SQL.keyedInstances), arguments: [range.from, range.to]).map { row in
                StoredInstance(address: row[0], type: row[1])
            }
        }
    }

    package func record(of address: String) throws(StoreError) -> MachineRecord? {
        try openConnection()
        do {
            // One indexed read per passivated instance coming back: without `read`'s
            // transaction and pragmas, as `journal(of:after:)` (only this process writes).
            return try database.inDatabase { db in
                try Row.fetchOne(db.cachedStatement(sql: SQL.record), arguments: [address]).map { row in
                    MachineRecord(address: row[0], type: row[1], snapshot: Self.bytes(row[2]), sequence: UInt64(bitPattern: row[3]))
                }
            }
        } catch {
            throw StoreError.fromSQLite(error, path: path, doing: "read a machine of")
        }
    }

    package func journal(of address: String, after sequence: UInt64) throws(StoreError) -> [JournalEntry] {
        let positions = book.withLock { $0.positions(of: address, after: sequence) }
        guard !positions.isEmpty else { return [] }
        try openConnection()
        do {
            // Without `read`'s transaction and read-only pragmas (four statements, more than
            // the rows of a short journal): rows at a live position are never rewritten, and
            // only this process writes the store.
            return try database.inDatabase { db in
                let read = try SQLiteJournalRead(in: db)
                var entries: [JournalEntry] = []
                entries.reserveCapacity(positions.count)
                for position in positions {
                    if let entry = try read.entry(at: position, of: address) { entries.append(entry) }
                }
                return entries
            }
        } catch {
            throw StoreError.fromSQLite(error, path: path, doing: "read the journal of")
        }
    }

    package func journalLaggards(limit: Int) -> [String] {
        book.withLock { $0.laggards(limit: limit, slack: laggardSlack) }
    }

    /// Dead journal rows tolerated, beyond as many as are live, before machines whose old
    /// entries hold them back are asked for a record.
    package static let defaultLaggardSlack: Int64 = 100_000

    package func deadLetters() throws(StoreError) -> [DeadLetter] {
        try read("read the dead letters of") { db in
            try Row.fetchAll(db.cachedStatement(sql: SQL.deadLetters)).map(Self.deadLetter)
        }
    }

    package func removeDeadLetter(_ id: Int64) throws(StoreError) -> DeadLetter? {
        try openConnection()
        do {
            return try database.write { db in
                guard let row = try Row.fetchOne(db.cachedStatement(sql: SQL.deadLetter), arguments: [id]) else { return nil }
                try db.cachedStatement(sql: SQL.removeDeadLetter).execute(arguments: [id])
                return Self.deadLetter(row)
            }
        } catch {
            throw StoreError.fromSQLite(error, path: path, doing: "remove a dead letter from")
        }
    }

    package func countCrash(of address: String, event identity: [UInt8], at time: Int64) throws(StoreError) -> Int {
        try openConnection()
        do {
            return try database.write { db in
                try Int.fetchOne(db.cachedStatement(sql: SQL.countCrash), arguments: [address, Data(identity), time]) ?? 1
            }
        } catch {
            throw StoreError.fromSQLite(error, path: path, doing: "count a crash in")
        }
    }

    package func forgetCrashes(of address: String, event identity: [UInt8]) throws(StoreError) {
        try openConnection()
        do {
            try database.write { db in
                try db.cachedStatement(sql: SQL.forgetCrashes).execute(arguments: [address, Data(identity)])
            }
        } catch {
            throw StoreError.fromSQLite(error, path: path, doing: "forget crashes in")
        }
    }

    package func crashes() throws(StoreError) -> [CrashCount] {
        try read("read the crashes of") { db in
            try Row.fetchAll(db.cachedStatement(sql: SQL.crashes)).map { row in
                CrashCount(address: row[0], event: Self.bytes(row[1]), count: row[2], time: row[3])
            }
        }
    }

    // MARK: - Helpers

    @discardableResult
    private func openConnection() throws(StoreError) -> Connection {
        let connection = state.withLock { $0 }
        guard !connection.closed else { throw StoreError("\(path) was closed; open the store again", code: .closed) }
        return connection
    }

    private func read<T>(_ doing: String, _ body: (Database) throws -> T) throws(StoreError) -> T {
        try openConnection()
        do {
            return try database.read(body)
        } catch {
            throw StoreError.fromSQLite(error, path: path, doing: doing)
        }
    }

    private static func deadLetter(_ row: Row) -> DeadLetter {
        DeadLetter(id: row[0], address: row[1], type: row[2], event: bytes(row[3]), binary: row[4], error: row[5],
                   crashes: row[6], time: row[7])
    }

    private static func bytes(_ data: Data?) -> [UInt8] {
        data.map { [UInt8]($0) } ?? []
    }
}
