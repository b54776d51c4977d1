import Foundation
import GroveCluster

/// The socket files a coordinator bound (its `ipc://` endpoints with a path), each known by its
/// device and inode right after the bind, so that a stop removes its own files and nothing else:
/// a file that was replaced since (another coordinator of the same user bound the path after
/// this one stopped listening) is left alone. libzmq unlinks them too, but only when its context
/// is terminated, which a process that stops and exits does not wait for.
struct BoundSocketFiles: Sendable {
    private struct File: Sendable {
        let path: String
        let device: dev_t
        let inode: ino_t
    }

    private let files: [File]

    /// Notes the socket files of `endpoints` (the endpoints as bound); others are skipped.
    init(_ endpoints: [String]) {
        files = endpoints.compactMap { endpoint in
            guard case .socket(let path) = LocalEndpoint(endpoint), let identity = Self.identity(of: path) else { return nil }
            return File(path: path, device: identity.device, inode: identity.inode)
        }
    }

    /// The paths noted.
    var paths: [String] { files.map(\.path) }

    /// Removes each file noted that is still the socket bound then.
    func remove() {
        for file in files {
            guard let identity = Self.identity(of: file.path), identity == (file.device, file.inode) else { continue }
            unlink(file.path)
        }
    }

    /// The device and inode of the socket at `path`; nil for anything else, or nothing.
    private static func identity(of path: String) -> (device: dev_t, inode: ino_t)? {
        var status = stat()
        guard lstat(path, &status) == 0, status.st_mode & S_IFMT == S_IFSOCK else { return nil }
        return (status.st_dev, status.st_ino)
    }
}
