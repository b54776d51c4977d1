package import Foundation

extension Topology {
    /// What would make this topology's workers refuse their data or audit directory, found
    /// before a launch so that `fsm-launch` refuses at once and says what to fix, rather than a
    /// worker exiting when its first durable or audited machine is placed. Nothing is created:
    /// a directory or file still missing is fine (workers create them, mode 0700 and 0600).
    ///
    /// A directory must be this user's, not a symbolic link, with no permission for group or
    /// others, and every directory above it this user's or root's, writable by nobody else
    /// (``DirectoryChain``); a store, lock, flight recorder or audit log of one of the topology's workers in
    /// it must be this user's regular file, not a link (``PrivateDirectory``, ``PrivateFile``).
    /// - Parameters:
    ///   - dataDirectory: Where durable machines are kept; looked at when any machine is durable.
    ///   - auditDirectory: Where transitions are logged; looked at when any machine is audited.
    ///   - uid: The launching user.
    /// - Returns: One line per problem: the directory's role, what is wrong, what to do.
    package func directoryProblems(dataDirectory: URL, auditDirectory: URL, uid: uid_t = geteuid()) -> [String] {
        var problems: [String] = []
        let workers = workerInstances.map(\.name)
        if hasDurableMachines {
            let files = workers.flatMap { ["\($0).sqlite", "\($0).sqlite.lock", "\($0).sqlite-wal", "\($0).sqlite-shm", "\($0).flight"] }
            problems += Self.problems(in: dataDirectory.path, files: files, uid: uid,
                                      role: "the data directory", instead: "or set durability.directory in the topology (fsm-launch: --data-dir)")
        }
        if hasAuditedMachines {
            problems += Self.problems(in: auditDirectory.path, files: workers.map { "\($0).jsonl" }, uid: uid,
                                      role: "the audit directory", instead: "or set audit.directory in the topology")
        }
        return problems
    }

    private static func problems(in directory: String, files: [String], uid: uid_t, role: String, instead: String) -> [String] {
        do {
            try PrivateDirectory.check(directory, uid: uid)
            for file in files { try PrivateFile.check((directory as NSString).appendingPathComponent(file), uid: uid) }
            return []
        } catch {
            return ["\(role): \(error); \(instead)"]
        }
    }
}
