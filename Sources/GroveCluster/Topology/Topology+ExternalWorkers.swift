public import Foundation

extension Topology {
    /// How to start one instance of an ``WorkerGroup/external`` group by hand, on the host it is
    /// to run on: what `fsm-launch` prints for each, once its coordinator has bound its endpoints.
    public struct ExternalWorkerCommand: Sendable, Equatable {
        /// The instance name, e.g. `"gpu-2"`.
        public var name: String
        /// The group's executable, as the topology names it (`fsm-worker` by default).
        public var executable: String
        /// The arguments, after the executable: `--name`, `--coordinator`, and with CURVE
        /// `--key-file` and `--coordinator-key`, with a PostgreSQL store that names a password
        /// file `--store-password-file`, for a group with `direct` on `--direct` (over tcp
        /// ``directHostPlaceholder``'s port 0, the host to fill in). Files are named by their last path component: the
        /// command runs in a directory of the worker's host that holds a copy of each of ``files``.
        public var arguments: [String]
        /// The files the command reads, as they are on this host (absolute): copy each into the
        /// directory the command runs in on the worker's host. Secrets: copy them as such (mode
        /// 0600, over ssh), never through a shared or world-readable place.
        public var files: [URL]

        /// - Parameters:
        ///   - name: The instance name.
        ///   - executable: The group's executable.
        ///   - arguments: The arguments after it.
        ///   - files: The files the command reads, as they are on this host.
        public init(name: String, executable: String, arguments: [String], files: [URL]) {
            self.name = name
            self.executable = executable
            self.arguments = arguments
            self.files = files
        }

        /// The host part of a tcp `--direct` endpoint fsm-launch cannot know: the address at
        /// which clients reach the worker's own host (docs/DIRECT-ROUTES.md, 1.2).
        public static let directHostPlaceholder = "HOST"

        /// What `fsm-launch` prints for the instance until it registers: the command, and the
        /// files to copy to its host first. Tools read the command between the backquotes.
        public var instructions: String {
            var text = "waiting for external worker \(name): start it with `\(line)`"
            if arguments.contains("tcp://\(Self.directHostPlaceholder):0") {
                text += ", \(Self.directHostPlaceholder) in --direct replaced by the address clients reach that host at"
            }
            guard !files.isEmpty else { return text }
            text += " in a directory holding " + files.map(\.lastPathComponent).joined(separator: " and ")
                + " (copy " + files.map(\.path).joined(separator: " and ") + " there from this host; a secret over ssh, mode 0600)"
            return text
        }

        /// The command as a shell reads it: each word as it is, or in single quotes when it holds
        /// a character a shell would act on (a Z85 key has `$`, `&`, `<`…).
        public var line: String {
            ([executable] + arguments).map(Self.shellWord).joined(separator: " ")
        }

        /// `word` as a shell reads it: as it is when it holds only characters a shell passes
        /// on, else in single quotes.
        public static func shellWord(_ word: String) -> String {
            let plain = !word.isEmpty && word.unicodeScalars.allSatisfy {
                $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "-_./:=@%+,".unicodeScalars.contains($0))
            }
            return plain ? word : "'" + word.replacingOccurrences(of: "'", with: #"'\''"#) + "'"
        }
    }

    /// The command for every instance of every external group, in the topology's order.
    ///
    /// A workers endpoint bound on every interface (`tcp://0.0.0.0:5556`, `tcp://*:5556`) names
    /// no address another host can use: `hostName` (the coordinator host's name) stands in for
    /// it. An ipc endpoint is printed as it is (its workers run on this host).
    /// - Parameters:
    ///   - workersEndpoint: The workers endpoint as the coordinator bound it (ports resolved).
    ///   - hostName: This host's name, for a wildcard address.
    ///   - coordinatorKey: The coordinator's public key in Z85 when the topology speaks CURVE.
    ///   - topologyDirectory: The topology file's folder, where relative key and password file
    ///     paths start; the current directory when `nil`.
    public func externalWorkerCommands(workersEndpoint: String, hostName: String, coordinatorKey: String?,
                                       topologyDirectory: URL?) -> [ExternalWorkerCommand] {
        let endpoint = ClientEndpoint.reachable(workersEndpoint, hostName: hostName)
        let base = topologyDirectory ?? URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
        func absolute(_ path: String) -> URL {
            path.hasPrefix("/") ? URL(fileURLWithPath: path).standardizedFileURL : base.appendingPathComponent(path).standardizedFileURL
        }
        return workers.filter(\.external).flatMap { group -> [ExternalWorkerCommand] in
            var shared: [String] = []
            var files: [URL] = []
            // A group of a CURVE topology always names its public key (the decoder requires
            // it); its secret is the same name with `_secret`, as `fsm-keys new` writes them.
            if let coordinatorKey, let key = group.key {
                let secret = absolute(key + "_secret")
                shared += ["--key-file", secret.lastPathComponent, "--coordinator-key", coordinatorKey]
                files.append(secret)
            }
            let durable = machines.contains { $0.worker == group.name && $0.durability != .none }
            if durable, let password = storePasswordFile(besides: topologyDirectory) {
                shared += ["--store-password-file", password.lastPathComponent]
                files.append(password)
            }
            return group.instanceNames.map { name in
                // Its own direct endpoint (design 1.2): a socket of its own beside an ipc workers
                // endpoint (same host), a free port on its own host over tcp.
                let direct = !group.direct ? []
                    : ["--direct", endpoint.hasPrefix("tcp://") ? "tcp://\(ExternalWorkerCommand.directHostPlaceholder):0"
                                                              : directEndpoint(ofWorker: name, connectingTo: endpoint)]
                return ExternalWorkerCommand(name: name, executable: group.executable,
                                             arguments: ["--name", name, "--coordinator", endpoint] + shared + direct, files: files)
            }
        }
    }
}

extension ClientEndpoint {
    /// `endpoint` as a peer on another host should connect to it: a wildcard host (every
    /// interface) becomes `hostName`; anything else is returned as it is.
    ///
    /// ```swift
    /// ClientEndpoint.reachable("tcp://0.0.0.0:5556", hostName: "grove-1")   // "tcp://grove-1:5556"
    /// ClientEndpoint.reachable("tcp://10.0.0.5:5556", hostName: "grove-1")  // unchanged
    /// ```
    public static func reachable(_ endpoint: String, hostName: String) -> String {
        guard let (host, port) = tcpHostAndPort(endpoint), isWildcard(host) else { return endpoint }
        return "tcp://\(hostName):\(port)"
    }
}
