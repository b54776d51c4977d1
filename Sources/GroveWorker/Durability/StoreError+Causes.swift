import Foundation
import GRDB

extension StoreError {
    /// A failed system call while `doing` something, e.g. "create the data directory /x".
    static func fromErrno(_ code: Int32, doing: String) -> StoreError {
        let reason = String(cString: strerror(code))
        switch code {
        case EACCES, EPERM, EROFS:
            return StoreError(
                "cannot \(doing) (\(reason)): give this user write access to it, or choose another data directory "
                    + "(durability.directory in the topology, --data-dir for a worker started by hand)",
                code: .permission)
        case ENOTDIR, EISDIR:
            return StoreError(
                "cannot \(doing) (\(reason)): a file stands where a directory belongs or the other way round; "
                    + "move it away or choose another data directory",
                code: .permission)
        case ENOSPC, EDQUOT:
            return StoreError("cannot \(doing) (\(reason)): free some space on that disk, or choose another data directory",
                              code: .full)
        default:
            return StoreError("cannot \(doing) (\(reason))", code: .failed)
        }
    }

    /// What SQLite reported while `doing` something with the store at `path`.
    static func fromSQLite(_ error: any Error, path: String, doing: String) -> StoreError {
        if let error = error as? StoreError { return error }
        guard let error = error as? DatabaseError else {
            return StoreError("cannot \(doing) \(path): \(error)", code: .failed)
        }
        let reason = error.message ?? "SQLite error \(error.resultCode.rawValue)"
        switch error.resultCode {
        case .SQLITE_PERM, .SQLITE_READONLY, .SQLITE_CANTOPEN, .SQLITE_AUTH:
            return StoreError(
                "cannot \(doing) \(path) (\(reason)): check that its directory exists and that this user may write to both "
                    + "(the database, its -wal and -shm files), or choose another data directory",
                code: .permission)
        case .SQLITE_FULL:
            return StoreError(
                "cannot \(doing) \(path) (\(reason)): the disk is full; free some space on it, or move the data directory",
                code: .full)
        case .SQLITE_NOTADB, .SQLITE_CORRUPT:
            return StoreError(
                "cannot \(doing) \(path) (\(reason)): it is not a Grove store or it is damaged; move it away (its machines "
                    + "then start from their initial state), or restore it from a copy",
                code: .corrupt)
        case .SQLITE_BUSY, .SQLITE_LOCKED:
            return StoreError(
                "cannot \(doing) \(path) (\(reason)): another process is using the database; stop it and try again",
                code: .locked)
        case .SQLITE_CONSTRAINT:
            return StoreError(
                "cannot \(doing) \(path) (\(reason)): the commit broke the store's rules and was rolled back; this is a bug "
                    + "in the worker, please report it",
                code: .rejected)
        default:
            return StoreError("cannot \(doing) \(path) (\(reason))", code: .failed)
        }
    }
}
