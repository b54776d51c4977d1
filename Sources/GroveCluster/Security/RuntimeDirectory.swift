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

    /// The socket path a worker process binds for direct routes over ipc
    /// (docs/DIRECT-ROUTES.md, 1.2): `<directory>/<name>/direct/<instance>.<incarnation, 16 hex>`,
    /// one per process, so that a stopped predecessor's socket never stands in a new one's way.
    package static func directSocket(ofTopology name: String, instance: String, incarnation: UInt64,
                                     environment: [String: String] = ProcessInfo.processInfo.environment,
                                     uid: uid_t = geteuid()) -> String {
        let hex = String(incarnation, radix: 16)
        return directory(ofTopology: name, environment: environment, uid: uid) + "/direct/" + instance + "."
            + String(repeating: "0", count: 16 - hex.count) + hex
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

extension Topology {
    /// The direct endpoint fsm-launch gives a worker process it starts, in a group with `direct`
    /// on (docs/DIRECT-ROUTES.md, 1.2): beside an ipc workers endpoint, a socket of its own in
    /// the topology's runtime directory, named with a fresh random number per start (so that a
    /// stopped predecessor's socket never stands in its way); beside a tcp one, a free port on
    /// the host the workers reach the coordinator at (`tcp://HOST:0`).
    /// - Parameter workers: The coordinator's workers endpoint as workers connect to it.
    package func directEndpoint(ofWorker instance: String, connectingTo workers: String,
                                environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if workers.hasPrefix("tcp://"), let colon = workers.lastIndex(of: ":") {
            return String(workers[..<colon]) + ":0"
        }
        return "ipc://" + RuntimeDirectory.directSocket(ofTopology: name, instance: instance, incarnation: .random(in: 1 ... .max),
                                                        environment: environment)
    }

    /// What is wrong with the direct sockets the workers of groups with `direct` on would bind
    /// over ipc (a topology whose workers endpoint is tcp binds tcp ports): each path must fit a
    /// socket's (`fsm-launch --check`). Empty when nothing is.
    package func directSocketProblems(environment: [String: String] = ProcessInfo.processInfo.environment,
                                      uid: uid_t = geteuid()) -> [String] {
        guard coordinator.workers.hasPrefix("ipc://") else { return [] }
        return workers.enumerated().compactMap { index, group in
            guard group.direct, let longest = group.instanceNames.max(by: { $0.utf8.count < $1.utf8.count }) else { return nil }
            let path = RuntimeDirectory.directSocket(ofTopology: name, instance: longest, incarnation: .max, environment: environment, uid: uid)
            guard path.utf8.count > LocalEndpoint.maximumSocketPath else { return nil }
            return "$.workers[\(index)].direct: worker \(longest)'s direct socket \(path) is \(path.utf8.count) bytes and a Unix socket's "
                + "path holds at most \(LocalEndpoint.maximumSocketPath); set \(RuntimeDirectory.variable) to a shorter directory, "
                + "or shorten the topology's or the group's name"
        }
    }
}
