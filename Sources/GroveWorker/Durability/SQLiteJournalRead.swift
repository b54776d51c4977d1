import GRDB
import GRDBSQLite

/// Reads journal rows by position through SQLite's own calls on a statement GRDB prepared and
/// caches. A GRDB cursor per row built the row's column-name table each time (lowercased
/// names in a dictionary): bringing back 500 instances of 1,000 entries each spent most of
/// its time there, and a worker restoring them under load missed its heartbeats. The rows and
/// the SQL are the same.
struct SQLiteJournalRead {
    /// Only this type steps it (see ``SQLiteJournalAppend/sql``).
    static let sql = "SELECT sequence, event, time FROM journal WHERE position = ? -- read by hand"

    private let statement: Statement
    private let connection: SQLiteConnection?

    init(in db: Database) throws {
        statement = try db.cachedStatement(sql: Self.sql)
        connection = db.sqliteConnection
    }

    /// The entry at `position`, of `address`; nil when no row is there.
    /// - Throws: `DatabaseError` with SQLite's code and message when the read fails.
    func entry(at position: Int64, of address: String) throws -> JournalEntry? {
        let handle = statement.sqliteStatement
        defer {
            sqlite3_reset(handle)
            sqlite3_clear_bindings(handle)
        }
        var code = sqlite3_bind_int64(handle, 1, position)
        if code == SQLITE_OK { code = sqlite3_step(handle) }
        switch code {
        case SQLITE_ROW:
            let sequence = UInt64(bitPattern: sqlite3_column_int64(handle, 0))
            // The blob's bytes are valid until the next step or reset: copied at once.
            let count = Int(sqlite3_column_bytes(handle, 1))
            let event = sqlite3_column_blob(handle, 1).map { [UInt8](UnsafeRawBufferPointer(start: $0, count: count)) } ?? []
            return JournalEntry(address: address, sequence: sequence, event: event, time: sqlite3_column_int64(handle, 2))
        case SQLITE_DONE:
            return nil
        default:
            let message = connection.map { String(cString: sqlite3_errmsg($0)) }
            throw DatabaseError(resultCode: ResultCode(rawValue: code), message: message, sql: Self.sql)
        }
    }
}
