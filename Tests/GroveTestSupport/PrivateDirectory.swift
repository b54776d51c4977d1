import Foundation

/// A new directory of this user's alone (mode 0700) under /tmp, short enough for socket paths.
/// Clients connect only to sockets in such a directory (abstract `ipc://@…` ones they refuse),
/// so tests that bind a socket of their own put it here.
package func makePrivateDirectory(_ prefix: String = "grove-test") -> String {
    var template = Array("/tmp/\(prefix)-XXXXXX".utf8CString)
    return template.withUnsafeMutableBufferPointer { buffer in
        guard let made = mkdtemp(buffer.baseAddress!) else { fatalError("mkdtemp failed: \(errno)") }
        return String(cString: made)
    }
}

/// `ipc://<a new private directory>/<name>`: see ``makePrivateDirectory(_:)``.
package func privateSocketEndpoint(_ name: String = "socket") -> String {
    "ipc://\(makePrivateDirectory())/\(name)"
}
