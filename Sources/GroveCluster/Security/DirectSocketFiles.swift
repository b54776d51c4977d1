package import Foundation

/// The socket files of a worker's direct endpoints over ipc (docs/DIRECT-ROUTES.md, 1.2):
/// `direct/<instance>.<16 hex>`, one per process. A clean stop removes its own; a process killed
/// with SIGKILL leaves its file behind, which the next process of the same instance sweeps at
/// start, sparing any that something still listens on (a stopped predecessor's).
package enum DirectSocketFiles {
    /// The names in a `direct/` directory that belong to processes of worker `instance`, other
    /// than `own` (the file this process is about to bind): `<instance>.` followed by exactly 16
    /// hex digits, so that instance `edge` never claims `edge-1.…` or `edge.x.…`.
    package static func predecessors(among names: [String], instance: String, own: String) -> [String] {
        let prefix = instance + "."
        return names.filter { name in
            guard name != own, name.hasPrefix(prefix) else { return false }
            let suffix = name.utf8.dropFirst(prefix.utf8.count)
            return suffix.count == 16 && suffix.allSatisfy { (UInt8(ascii: "0") ... UInt8(ascii: "9")).contains($0)
                || (UInt8(ascii: "a") ... UInt8(ascii: "f")).contains($0) }
        }
    }

    /// Removes the files of `instance`'s earlier processes in the directory of `path` (the socket
    /// this process binds) that nobody listens on.
    /// - Parameters:
    ///   - isListening: Whether a process listens on a socket file's path (``LocalEndpoint/isListening(_:)``).
    ///   - remove: Removes a path; `false` when it could not, or when it is no socket
    ///     (``removeSocket(_:)``: a file of another kind is never this sweep's).
    /// - Returns: The paths removed, for the log.
    @discardableResult
    package static func sweepLeftovers(beside path: String, instance: String,
                                       isListening: (String) -> Bool = LocalEndpoint.isListening,
                                       remove: (String) -> Bool = removeSocket) -> [String] {
        let directory = (path as NSString).deletingLastPathComponent
        let own = (path as NSString).lastPathComponent
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return predecessors(among: names.sorted(), instance: instance, own: own)
            .map { directory + "/" + $0 }
            .filter { !isListening($0) && remove($0) }
    }

    /// Unlinks `path` when it is a socket file (not followed if a link); `false` otherwise.
    package static func removeSocket(_ path: String) -> Bool {
        var status = stat()
        guard lstat(path, &status) == 0, status.st_mode & S_IFMT == S_IFSOCK else { return false }
        return unlink(path) == 0
    }
}
