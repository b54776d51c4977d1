import Foundation
import GroveCluster
import Synchronization

/// An exclusive lock on `<database>.lock`, held while a store is open, so that two processes
/// never write one worker's database: a second worker started with the same name is refused at
/// once, with the holder's pid.
///
/// Why a lock file with `flock` rather than SQLite's `PRAGMA locking_mode=EXCLUSIVE`: the lock
/// is taken when the store opens, not at its first write, and refused at once rather than after a
/// busy timeout; the operating system drops it when the holder dies (kill -9 included), so no
/// stale lock outlives a crash; and the database keeps WAL's shared memory, so `sqlite3` can read
/// it while the worker runs. A separate file rather than the database itself, because closing
/// any descriptor of the database file would drop SQLite's own POSIX locks on it.
final class StoreLock: Sendable {
    let path: String
    /// The locked file's descriptor until ``release()``; nil after, so that a second release
    /// never closes a descriptor number the process has since handed to something else (a
    /// socket's eventfd, say).
    private let descriptor: Mutex<Int32?>

    /// Takes the lock, creating the file (mode 0600) when it is missing, and writes this
    /// process's pid in it for the message another opener gets. A link there, or another
    /// user's file, is refused (``PrivateFile``).
    /// - Parameters:
    ///   - path: The lock file, e.g. `grove-data/default/main.sqlite.lock`.
    ///   - holder: Who is refused, for the message, e.g. `another worker named 'main'`.
    /// - Throws: ``StoreError`` `locked` when another process holds it; `permission` or `failed`
    ///   when the file cannot be created.
    init(path: String, holder: String) throws(StoreError) {
        self.path = path
        let descriptor: Int32
        do throws(PrivateFile.OpenError) {
            descriptor = try PrivateFile.open(path, flags: O_RDWR | O_CREAT)
        } catch {
            throw StoreError.opening(path, error, what: "the lock file")
        }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            let code = errno
            let pid = Self.readPid(descriptor)
            close(descriptor)
            guard code == EWOULDBLOCK else { throw StoreError.fromErrno(code, doing: "lock \(path)") }
            let who = pid.map { "process \($0)" } ?? "another process"
            throw StoreError(
                "\(path) is held by \(who): \(holder) is running with this data directory. Stop it first, or give this "
                    + "worker another name or data directory (two processes must never share one worker's store)",
                code: .locked)
        }
        let text = Array("\(getpid())\n".utf8)
        if ftruncate(descriptor, 0) == 0 {
            _ = text.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
        }
        self.descriptor = Mutex(descriptor)
    }

    deinit {
        release()
    }

    /// Releases the lock (closing the descriptor releases it); later calls do nothing. Leaves
    /// the file: removing it would race with a process that has just opened it.
    func release() {
        guard let descriptor = descriptor.withLock({ held in defer { held = nil }; return held }) else { return }
        close(descriptor)
    }

    private static func readPid(_ descriptor: Int32) -> Int32? {
        var buffer = [UInt8](repeating: 0, count: 32)
        let count = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return nil }
        let text = String(decoding: buffer[..<count], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return Int32(text)
    }
}
