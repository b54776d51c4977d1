import GRDB
import GRDBSQLite

/// Writes a commit's machine records through SQLite's own binding calls on a statement GRDB
/// prepared and caches, as ``SQLiteJournalAppend`` does for the journal. GRDB's
/// `execute(arguments:)` built a `StatementArguments` array of `DatabaseValue`s and a `Data`
/// copy of the snapshot per record: with it, SQLite and GRDB were 19 % of a worker's samples
/// spawning fresh keys at a million keys, 14 % without. The rows and the SQL are the same.
struct SQLiteRecordUpsert {
    /// Only this type steps it, so GRDB's own state for it (its arguments, whether it was reset)
    /// never has to agree with what is done here.
    static let sql = """
        INSERT INTO machines (address, type, snapshot, sequence) VALUES (?, ?, ?, ?)
        ON CONFLICT (address) DO UPDATE SET type = excluded.type, snapshot = excluded.snapshot, sequence = excluded.sequence
        -- bound by hand
        """
    /// SQLite copies what is bound before the call returns (`SQLITE_TRANSIENT`).
    private static let transient = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)

    private let statement: Statement
    private let connection: SQLiteConnection?

    init(in db: Database) throws {
        statement = try db.cachedStatement(sql: Self.sql)
        connection = db.sqliteConnection
    }

    /// Inserts `record`'s row, or replaces the row of its address.
    /// - Throws: `DatabaseError` with SQLite's code and message when it is refused.
    func upsert(_ record: MachineRecord) throws {
        let handle = statement.sqliteStatement
        defer {
            sqlite3_reset(handle)
            sqlite3_clear_bindings(handle)
        }
        var address = record.address
        var code = address.withUTF8 { sqlite3_bind_text(handle, 1, $0.baseAddress, Int32($0.count), Self.transient) }
        if code == SQLITE_OK {
            var type = record.type
            code = type.withUTF8 { sqlite3_bind_text(handle, 2, $0.baseAddress, Int32($0.count), Self.transient) }
        }
        if code == SQLITE_OK {
            // A zero-length blob, not NULL, for an empty snapshot (the column is NOT NULL).
            code = record.snapshot.withUnsafeBytes {
                sqlite3_bind_blob(handle, 3, $0.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32($0.count), Self.transient)
            }
        }
        if code == SQLITE_OK { code = sqlite3_bind_int64(handle, 4, Int64(bitPattern: record.sequence)) }
        if code == SQLITE_OK { code = sqlite3_step(handle) }
        guard code == SQLITE_DONE else {
            let message = connection.map { String(cString: sqlite3_errmsg($0)) }
            throw DatabaseError(resultCode: ResultCode(rawValue: code), message: message, sql: Self.sql)
        }
    }
}
