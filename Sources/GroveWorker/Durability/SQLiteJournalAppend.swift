import GRDB
import GRDBSQLite

/// Appends a commit's journal rows through SQLite's own binding calls on a statement GRDB
/// prepared and caches. GRDB's `execute(arguments:)` built a `StatementArguments` array of
/// `DatabaseValue`s and a `Data` per row (about a tenth of a journal worker's CPU under load:
/// a commit of 200 events binds 1,000 values); the rows and the SQL are the same.
struct SQLiteJournalAppend {
    /// Only this type steps it, so GRDB's own state for it (its arguments, whether it was reset)
    /// never has to agree with what is done here.
    static let sql = "INSERT INTO journal (position, address, sequence, event, time) VALUES (?, ?, ?, ?, ?) -- bound by hand"
    /// SQLite copies what is bound before the call returns (`SQLITE_TRANSIENT`).
    private static let transient = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)

    private let statement: Statement
    private let connection: SQLiteConnection?

    init(in db: Database) throws {
        statement = try db.cachedStatement(sql: Self.sql)
        connection = db.sqliteConnection
    }

    /// Inserts one row.
    /// - Throws: `DatabaseError` with SQLite's code and message when it is refused.
    func append(position: Int64, address: String, sequence: UInt64, event: [UInt8], time: Int64) throws {
        let handle = statement.sqliteStatement
        defer {
            sqlite3_reset(handle)
            sqlite3_clear_bindings(handle)
        }
        var code = sqlite3_bind_int64(handle, 1, position)
        if code == SQLITE_OK {
            var address = address
            code = address.withUTF8 { sqlite3_bind_text(handle, 2, $0.baseAddress, Int32($0.count), Self.transient) }
        }
        if code == SQLITE_OK { code = sqlite3_bind_int64(handle, 3, Int64(bitPattern: sequence)) }
        if code == SQLITE_OK {
            // A zero-length blob, not NULL, for an empty event (the column is NOT NULL).
            code = event.withUnsafeBytes { sqlite3_bind_blob(handle, 4, $0.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32($0.count), Self.transient) }
        }
        if code == SQLITE_OK { code = sqlite3_bind_int64(handle, 5, time) }
        if code == SQLITE_OK { code = sqlite3_step(handle) }
        guard code == SQLITE_DONE else {
            let message = connection.map { String(cString: sqlite3_errmsg($0)) }
            throw DatabaseError(resultCode: ResultCode(rawValue: code), message: message, sql: Self.sql)
        }
    }
}
