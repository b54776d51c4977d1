import Foundation
import GRDB
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
    private let database: DatabaseQueue
    private let lock: StoreLock
    private let state = Mutex(Connection())

    private struct Connection {
        /// What `PRAGMA synchronous` is set to now.
        var flush = StoreFlush.process
        var closed = false
    }

    /// Opens (creating when missing) the store of the worker named `worker` in `directory`:
    /// `<directory>/<worker>.sqlite`. The directory is created with mode 0700 (snapshots hold
    /// machine state, secrets included). A worker calls this only once a welcome places a durable
    /// machine on it, so that topologies without durability never create a file.
    /// - Parameters:
    ///   - directory: The data directory, e.g. `grove-data/default`.
    ///   - worker: The worker instance name, e.g. `data-io-2`.
    /// - Throws: ``StoreError``: `locked` when another process (a worker with the same name) has
    ///   the store open; `permission`, `full`, `corrupt` or `newerVersion` with what to do.
    package static func open(directory: String, worker: String) throws(StoreError) -> SQLiteMachineStore {
        guard !worker.isEmpty, !worker.contains("/"), worker != ".", worker != ".." else {
            throw StoreError("'\(worker)' cannot name a store file; give the worker a name without '/'", code: .failed)
        }
        try createDirectory(directory)
        let path = URL(fileURLWithPath: directory).appendingPathComponent("\(worker).sqlite").path
        return try SQLiteMachineStore(path: path, holder: "another worker named '\(worker)'")
    }

    /// Opens (creating when missing) the store at `path`; its directory must exist.
    /// - Parameters:
    ///   - path: The database file.
    ///   - holder: Who a second opener is told holds it.
    /// - Throws: ``StoreError``, as ``open(directory:worker:)``.
    package init(path: String, holder: String = "another worker with the same name") throws(StoreError) {
        self.path = path
        lock = try StoreLock(path: path + ".lock", holder: holder)
        // Readable by the worker's user only: records hold machine state, secrets included.
        // SQLite gives the -wal and -shm files the database file's mode.
        let descriptor = Glibc.open(path, O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
        if descriptor >= 0 { Glibc.close(descriptor) }
        chmod(path, 0o600)
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

    private static func createDirectory(_ directory: String) throws(StoreError) {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else { throw StoreError.fromErrno(ENOTDIR, doing: "use the data directory \(directory)") }
            return
        }
        do {
            try FileManager.default.createDirectory(
                atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            let code = ((error as NSError).userInfo[NSUnderlyingErrorKey] as? NSError)?.code ?? Int(EACCES)
            throw StoreError.fromErrno(Int32(code), doing: "create the data directory \(directory)")
        }
    }

    // MARK: - MachineStore

    package func commit(_ commit: StoreCommit) throws(StoreError) {
        guard !commit.isEmpty else { return }
        let flush = try openConnection().flush
        do {
            try database.writeWithoutTransaction { db in
                if flush != commit.flush {
                    try db.execute(sql: commit.flush == .disk ? "PRAGMA synchronous = FULL" : "PRAGMA synchronous = NORMAL")
                    state.withLock { $0.flush = commit.flush }
                }
                try db.inTransaction(.immediate) {
                    try Self.write(commit, in: db)
                    return .commit
                }
            }
        } catch {
            throw StoreError.fromSQLite(error, path: path, doing: "commit to")
        }
    }

    private static func write(_ commit: StoreCommit, in db: Database) throws {
        if !commit.removed.isEmpty {
            let record = try db.cachedStatement(sql: SQL.removeRecord)
            let journal = try db.cachedStatement(sql: SQL.removeJournal)
            for address in commit.removed {
                try record.execute(arguments: [address])
                try journal.execute(arguments: [address])
            }
        }
        if !commit.records.isEmpty {
            let upsert = try db.cachedStatement(sql: SQL.upsertRecord)
            for record in commit.records {
                try upsert.execute(arguments: [
                    record.address, record.type, Data(record.snapshot), Int64(bitPattern: record.sequence),
                ])
            }
        }
        if !commit.journal.isEmpty {
            let append = try db.cachedStatement(sql: SQL.appendJournal)
            for entry in commit.journal {
                try append.execute(arguments: [entry.address, Int64(bitPattern: entry.sequence), Data(entry.event), entry.time])
            }
        }
        if !commit.truncations.isEmpty {
            let truncate = try db.cachedStatement(sql: SQL.truncateJournal)
            for truncation in commit.truncations {
                try truncate.execute(arguments: [truncation.address, Int64(bitPattern: truncation.through)])
            }
        }
        if !commit.deadLetters.isEmpty {
            let insert = try db.cachedStatement(sql: SQL.insertDeadLetter)
            for letter in commit.deadLetters {
                try insert.execute(arguments: [
                    letter.address, letter.type, Data(letter.event), letter.binary, letter.error, letter.crashes, letter.time,
                ])
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

    package func journal(of address: String, after sequence: UInt64) throws(StoreError) -> [JournalEntry] {
        try read("read the journal of") { db in
            let statement = try db.cachedStatement(sql: SQL.journal)
            return try Row.fetchAll(statement, arguments: [address, Int64(bitPattern: sequence)]).map { row in
                JournalEntry(address: address, sequence: UInt64(bitPattern: row[0]), event: Self.bytes(row[1]), time: row[2])
            }
        }
    }

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
