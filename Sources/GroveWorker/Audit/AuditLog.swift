import Foundation
import GroveCluster
import GroveWire
import Synchronization

/// One worker's audit log file, `<directory>/<worker>.jsonl`, opened for appending: lines from
/// earlier runs of the worker stay. The directory is created with mode 0700 and the file 0600,
/// as the store's are: lines carry digests of states with secrets. As the store's, a directory
/// or file that is a symbolic link, another user's or (the directory) open to others is refused.
///
/// A line the file took only in part (the disk filled mid-write, after which the worker exits
/// 74; or the process was killed mid-write) is not followed on the same line: a log whose last
/// byte is not a newline gets one before its next line. The partial line is kept, as evidence,
/// on a line of its own (it does not parse as JSON; readers skip it), rather than truncated away.
final class AuditLog: Sendable {
    /// The file's path.
    let path: String
    private let descriptor: Int32
    private let sync: Bool
    /// Whether the file ended in the middle of a line when it was opened: the first append
    /// ends that line first.
    private let unterminated: Mutex<Bool>

    /// Opens (creating when needed) `<directory>/<worker>.jsonl`.
    /// - Parameter sync: Whether every ``append(_:)`` is synced to the disk (`flush: disk`).
    /// - Throws: ``AuditLogError`` naming the file and what to do.
    init(directory: String, worker: String, sync: Bool) throws(AuditLogError) {
        do throws(PrivateDirectory.Refusal) {
            try PrivateDirectory.prepare(directory)
        } catch {
            throw AuditLogError(.cannotOpen, path: error.path, "the audit directory: \(error); or set the topology's audit.directory "
                                + "(--audit-dir for a worker started by hand)")
        }
        path = (directory as NSString).appendingPathComponent(worker + ".jsonl")
        do throws(PrivateFile.OpenError) {
            // Read too: its last byte says whether an earlier run left a partial line.
            descriptor = try PrivateFile.open(path, flags: O_RDWR | O_CREAT | O_APPEND)
        } catch {
            switch error {
            case .refused(let refusal):
                throw AuditLogError(.cannotOpen, path: path, "the audit log: \(refusal); or set the topology's audit.directory")
            case .failed(let code):
                throw AuditLogError(.cannotOpen, path: path, "cannot open the audit log \(path): \(String(cString: strerror(code))); "
                                    + "make it writable for this worker, or set the topology's audit.directory")
            }
        }
        self.sync = sync
        unterminated = Mutex(Self.endsMidLine(descriptor))
    }

    /// Whether the file at `descriptor` is not empty and its last byte is not a newline.
    private static func endsMidLine(_ descriptor: Int32) -> Bool {
        var facts = stat()
        guard fstat(descriptor, &facts) == 0, facts.st_size > 0 else { return false }
        var last: UInt8 = 0
        return pread(descriptor, &last, 1, facts.st_size - 1) == 1 && last != UInt8(ascii: "\n")
    }

    deinit {
        close(descriptor)
    }

    /// Appends `lines` (whole lines), synced with `flush: disk`.
    /// - Throws: ``AuditLogError`` when the file takes less than all of them (a full disk, say).
    func append(_ lines: [UInt8]) throws(AuditLogError) {
        let bytes = unterminated.withLock { $0 } ? [UInt8(ascii: "\n")] + lines : lines
        var written = 0
        while written < bytes.count {
            let result = bytes.withUnsafeBytes { buffer in
                write(descriptor, buffer.baseAddress! + written, buffer.count - written)
            }
            if result < 0 {
                if errno == EINTR { continue }
                // What the file took ends mid-line: a later append (if any) starts a new one.
                if written > 0 { unterminated.withLock { $0 = bytes[written - 1] != UInt8(ascii: "\n") } }
                throw AuditLogError(.cannotWrite, path: path, "cannot write to the audit log \(path): \(String(cString: strerror(errno))); "
                                    + "free space or fix its permissions, then restart the worker")
            }
            written += result
        }
        unterminated.withLock { $0 = false }
        if sync, fsync(descriptor) != 0 {
            throw AuditLogError(.cannotWrite, path: path, "cannot sync the audit log \(path): \(String(cString: strerror(errno)))")
        }
    }
}

/// An audit log that cannot be opened or written. Equal when their codes are.
struct AuditLogError: Error, Equatable, CustomStringConvertible {
    enum Code: Equatable {
        /// The directory or file could not be created or opened.
        case cannotOpen
        /// A write or sync failed.
        case cannotWrite
    }

    var code: Code
    /// The file or directory involved.
    var path: String
    /// What went wrong and what to do.
    var message: String

    init(_ code: Code, path: String, _ message: String) {
        self.code = code
        self.path = path
        self.message = message
    }

    static func == (lhs: Self, rhs: Self) -> Bool { lhs.code == rhs.code }

    var description: String { message }
}
