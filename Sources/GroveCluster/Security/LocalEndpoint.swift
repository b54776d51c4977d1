package import Foundation

/// An `ipc://` endpoint, and the checks that tell whether only this user (or root) could have
/// made the socket it names: the coordinator's before it binds, a client's or worker's before
/// it connects (docs/SECURITY.md, "Local endpoints: only the launching user").
package enum LocalEndpoint: Equatable, Sendable {
    /// The most bytes of a socket path (`sun_path` less its terminator).
    package static let maximumSocketPath = 107

    /// `ipc://@NAME`: a Linux abstract socket, with no owner and no permissions.
    case abstract(name: String)
    /// `ipc://PATH`: a socket file; a relative path made absolute from the current directory,
    /// and nothing else changed (the kernel resolves `..` and links on the way; the checks walk
    /// the path as it does).
    case socket(path: String)
    /// Not ipc (tcp, or anything ZeroMQ will judge itself).
    case other

    package init(_ endpoint: String, currentDirectory: String = FileManager.default.currentDirectoryPath) {
        guard endpoint.hasPrefix("ipc://") else {
            self = .other
            return
        }
        let address = String(endpoint.dropFirst("ipc://".count))
        if address.hasPrefix("@") {
            self = .abstract(name: String(address.dropFirst()))
        } else if address.hasPrefix("/") {
            self = .socket(path: address)
        } else {
            self = .socket(path: currentDirectory + "/" + address)
        }
    }

    /// The directory holding the socket of a `.socket` endpoint.
    package var directory: String? {
        guard case .socket(let path) = self else { return nil }
        return (path as NSString).deletingLastPathComponent
    }

    // MARK: - Checks

    /// Refuses a socket path unless only `uid` (or root) could have made what is there: every
    /// directory on the way is this user's or root's and writable by nobody else (a sticky
    /// one, as `/tmp`, passes: nobody may rename what another user put in it), the one holding
    /// the socket is not a symbolic link, and the socket, when there is one, is this user's.
    /// A link on the way is followed, and what it leads to checked the same way.
    /// - Throws: ``PrivateDirectory/Refusal`` naming the path and what is wrong.
    package static func checkSocket(_ path: String, uid: uid_t = geteuid()) throws(PrivateDirectory.Refusal) {
        let directory = (path as NSString).deletingLastPathComponent
        try DirectoryChain.checkAbove(directory, uid: uid)
        try judge(directory, .socketDirectory, uid: uid, required: true)
        try judge(path, .socket, uid: uid, required: false)
    }

    private static func judge(_ path: String, _ rule: PathRule, uid: uid_t, required: Bool) throws(PrivateDirectory.Refusal) {
        do throws(PathProblem) {
            guard let facts = try PathFacts.of(path) else {
                if required { throw PathProblem.missing }
                return
            }
            if let problem = rule.judge(facts, uid: uid) { throw problem }
        } catch {
            throw PrivateDirectory.Refusal(path: path, problem: error)
        }
    }

    /// Whether a process listens on the socket at `path` (a `connect` to it succeeds): ZeroMQ
    /// removes the file of a socket it binds, so a second coordinator would take a live one
    /// over without a word.
    package static func isListening(_ path: String) -> Bool {
        let descriptor = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            buffer.copyBytes(from: bytes)
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        return connected == 0
    }
}
