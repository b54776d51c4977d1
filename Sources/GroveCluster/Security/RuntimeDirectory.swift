public import Foundation

/// Where a topology that names no endpoints of its own puts its ipc sockets: a directory of
/// the launching user's alone, so that no other user can bind them first, or answer in the
/// coordinator's place (docs/SECURITY.md, "Local endpoints: only the launching user").
///
/// The directory is `$GROVE_RUNTIME_DIR` when set, else `$XDG_RUNTIME_DIR/grove` when
/// `XDG_RUNTIME_DIR` is set, else `/tmp/grove-<uid>`. Topology `NAME` binds
/// `<directory>/NAME/clients`, `…/workers` and `…/events`. `fsm-launch`, `fsm-send`, `fsm-load`
/// and ``Client`` all ask this type, so they agree without a flag: run them as the same user,
/// with the same environment.
///
/// ```swift
/// RuntimeDirectory.endpoints(ofTopology: "default").clients   // "ipc:///run/user/1000/grove/default/clients"
/// ```
public enum RuntimeDirectory {
    /// The environment variable that chooses the directory.
    public static let variable = "GROVE_RUNTIME_DIR"

    /// The runtime directory for a process of `uid` with `environment`.
    /// - Parameters:
    ///   - environment: The process's environment; `GROVE_RUNTIME_DIR` relative to the current
    ///     directory is made absolute, an `XDG_RUNTIME_DIR` that is not absolute is ignored (as
    ///     the XDG specification says).
    ///   - uid: The user the directory is for.
    public static func path(environment: [String: String] = ProcessInfo.processInfo.environment, uid: uid_t = geteuid()) -> String {
        if let chosen = environment[variable], !chosen.isEmpty {
            return URL(fileURLWithPath: chosen).standardizedFileURL.path
        }
        if let xdg = environment["XDG_RUNTIME_DIR"], xdg.hasPrefix("/") {
            return URL(fileURLWithPath: xdg).appendingPathComponent("grove").standardizedFileURL.path
        }
        return "/tmp/grove-\(uid)"
    }

    /// `<runtime directory>/<name>`: where topology `name` binds its sockets.
    public static func directory(ofTopology name: String, environment: [String: String] = ProcessInfo.processInfo.environment,
                                 uid: uid_t = geteuid()) -> String {
        path(environment: environment, uid: uid) + "/" + name
    }

    /// The endpoints topology `name` binds when it names none: `ipc://<directory>/<name>/clients`,
    /// `…/workers`, `…/events`.
    public static func endpoints(ofTopology name: String, environment: [String: String] = ProcessInfo.processInfo.environment,
                                 uid: uid_t = geteuid()) -> Topology.Endpoints {
        let directory = directory(ofTopology: name, environment: environment, uid: uid)
        return Topology.Endpoints(clients: "ipc://\(directory)/clients", workers: "ipc://\(directory)/workers",
                                  events: "ipc://\(directory)/events")
    }

    /// Why `name` cannot name a directory, or `nil` when it can.
    static func unusableName(_ name: String) -> String? {
        if name == "." || name == ".." { return "'\(name)' is not a directory's own name" }
        if name.contains("/") { return "it contains '/'" }
        if name.utf8.contains(0) { return "it contains a NUL character" }
        return nil
    }
}
