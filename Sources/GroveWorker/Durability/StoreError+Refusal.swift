import GroveCluster

extension StoreError {
    /// A data directory or file refused as another user's, a symbolic link or open to others.
    static func refused(_ refusal: PrivateDirectory.Refusal) -> StoreError {
        StoreError("\(refusal); or choose another data directory (durability.directory in the topology, --data-dir for a worker "
                   + "started by hand)", code: .permission)
    }

    /// A store file that could not be opened as ``PrivateFile/open(_:flags:uid:)`` opens them.
    static func opening(_ path: String, _ error: PrivateFile.OpenError, what: String) -> StoreError {
        switch error {
        case .refused(let refusal): refused(refusal)
        case .failed(let code): fromErrno(code, doing: "open \(what) \(path)")
        }
    }
}
