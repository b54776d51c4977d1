package import Foundation

/// Directories only the running user may use: the runtime directory and a topology's socket
/// directory in it, the data and audit directories. Each is created with mode 0700, or checked
/// when it exists: a directory, not a symbolic link, this user's, with no permission for group
/// or others. What another user made first is refused, never adopted. Every directory above it
/// is checked too (``DirectoryChain``): this user's or root's, writable by nobody else (sticky
/// passes), a link on the way this user's or root's and where it leads checked the same way;
/// otherwise whoever may write there could swap the directory for one of theirs, or a link.
package enum PrivateDirectory {
    /// Creates `path` (and whatever of its parents is missing, each with mode 0700) or checks
    /// the one there.
    /// - Parameters:
    ///   - path: An absolute path.
    ///   - uid: The user it must belong to; the process's effective uid.
    /// - Throws: ``PrivateDirectory/Refusal`` naming the path and what is wrong with it.
    package static func prepare(_ path: String, uid: uid_t = geteuid()) throws(Refusal) {
        // Nothing is created below a directory another user could swap.
        try checkAbove(path, uid: uid, allowMissing: true)
        try makeMissing(path)
        try check(path, uid: uid, required: true)
    }

    /// Checks `path` without creating anything: what ``prepare(_:uid:)`` would refuse.
    /// - Parameter required: Whether a missing directory is a problem (`false`: it would be
    ///   created).
    /// - Throws: ``PrivateDirectory/Refusal``.
    package static func check(_ path: String, uid: uid_t = geteuid(), required: Bool = false) throws(Refusal) {
        guard try checkAbove(path, uid: uid, allowMissing: !required) else { return }
        let facts: PathFacts?
        do throws(PathProblem) {
            facts = try PathFacts.of(path)
        } catch {
            throw Refusal(path: path, problem: error)
        }
        guard let facts else {
            if required { throw Refusal(path: path, problem: .missing) }
            return
        }
        if let problem = PathRule.privateDirectory.judge(facts, uid: uid) { throw Refusal(path: path, problem: problem) }
    }

    /// ``DirectoryChain/checkAbove(_:uid:allowMissing:lookup:)``, a refusal naming `path` too.
    @discardableResult
    private static func checkAbove(_ path: String, uid: uid_t, allowMissing: Bool) throws(Refusal) -> Bool {
        do throws(Refusal) {
            return try DirectoryChain.checkAbove(path, uid: uid, allowMissing: allowMissing)
        } catch {
            var refusal = error
            refusal.below = path
            throw refusal
        }
    }

    /// `mkdir -p` with mode 0700 for what it creates; an entry that appears meanwhile (another
    /// process of ours) is fine, and checked after.
    private static func makeMissing(_ path: String) throws(Refusal) {
        var missing: [String] = []
        // As given, not standardized: Foundation's `standardizingPath` resolves links.
        var current = path
        while current.count > 1, current.hasSuffix("/") { current.removeLast() }
        while !current.isEmpty, current != "/" {
            var status = stat()
            if lstat(current, &status) == 0 { break }
            guard errno == ENOENT else { throw Refusal(path: current, problem: .cannotInspect(errno: errno)) }
            missing.append(current)
            current = (current as NSString).deletingLastPathComponent
        }
        for directory in missing.reversed() {
            if mkdir(directory, 0o700) == 0 {
                // Exactly 0700, whatever the umask took away.
                chmod(directory, 0o700)
            } else if errno != EEXIST {
                throw Refusal(path: directory, problem: .cannotCreate(errno: errno))
            }
        }
    }

    /// A directory refused: which one, and why.
    package struct Refusal: Error, Sendable, Equatable, CustomStringConvertible {
        package var path: String
        package var problem: PathProblem
        /// The directory wanted, when ``path`` is a directory or link above it.
        package var below: String?

        package init(path: String, problem: PathProblem, below: String? = nil) {
            self.path = path
            self.problem = problem
            self.below = below
        }

        package var description: String {
            guard let below else { return problem.describe(path) }
            return "\(path), on the way to \(below), cannot be trusted: \(problem.describe(path))"
        }
    }
}

/// Files Grove keeps in a private directory (stores, their lock files, flight recorders,
/// audit logs), opened without following a symbolic link and refused when another user's.
package enum PrivateFile {
    /// Opens `path` with `flags` (adding `O_NOFOLLOW` and `O_CLOEXEC`), creating it with mode
    /// 0600 when `flags` has `O_CREAT`, and gives it mode 0600: it holds machine data.
    /// - Returns: The descriptor.
    /// - Throws: ``OpenError/refused(_:)`` for a link, a file that is not a regular one, or
    ///   another user's; ``OpenError/failed(errno:)`` for anything else.
    package static func open(_ path: String, flags: Int32, uid: uid_t = geteuid()) throws(OpenError) -> Int32 {
        let descriptor = Glibc.open(path, flags | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            let code = errno
            // O_NOFOLLOW on a link fails with ELOOP.
            if code == ELOOP { throw .refused(.init(path: path, problem: .symlink)) }
            throw .failed(errno: code)
        }
        do throws(PathProblem) {
            let facts = try PathFacts.of(descriptor: descriptor)
            if let problem = PathRule.privateFile.judge(facts, uid: uid) { throw problem }
        } catch {
            Glibc.close(descriptor)
            throw .refused(.init(path: path, problem: error))
        }
        fchmod(descriptor, 0o600)
        return descriptor
    }

    /// Refuses a file at `path` that ``open(_:flags:uid:)`` would refuse; nothing there is fine.
    /// For files another library opens by its path (SQLite's `-wal` and `-shm`), and for
    /// checking before a launch.
    /// - Throws: ``PrivateDirectory/Refusal``.
    package static func check(_ path: String, uid: uid_t = geteuid()) throws(PrivateDirectory.Refusal) {
        do throws(PathProblem) {
            if let problem = try PathRule.privateFile.problem(at: path, uid: uid) { throw problem }
        } catch {
            throw PrivateDirectory.Refusal(path: path, problem: error)
        }
    }

    /// Why ``open(_:flags:uid:)`` failed.
    package enum OpenError: Error, Sendable {
        /// The path is not one to trust.
        case refused(PrivateDirectory.Refusal)
        /// `open` failed with this `errno`.
        case failed(errno: Int32)
    }
}
