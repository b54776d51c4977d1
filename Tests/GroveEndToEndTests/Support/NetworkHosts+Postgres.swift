import Foundation
import Testing

extension NetworkHosts {
    /// The relays that carry PostgreSQL connections from the hosts to the server: one end in the
    /// root namespace on a Unix socket, one per host on its loopback (``PostgresRelay``).
    struct PostgresRelays: Sendable {
        /// The relays' own directory (script and socket), removed by ``NetworkHosts/tearDown()``.
        var directory: URL?
        /// The end beside the server, listening on `directory/pg.sock`.
        var root: ChildProcess?
        /// The server the root end connects to, `host:port`.
        var server: String?
        /// The end on each host, by host name.
        var hosts: [String: ChildProcess] = [:]
    }

    /// Why a host cannot reach PostgreSQL here, or `nil` when it can: the relay is a Python script.
    static let postgresRelaySkipReason: Comment? = {
        let probe = Process()
        probe.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        probe.arguments = ["python3", "-c", "import asyncio"]
        probe.standardOutput = FileHandle.nullDevice
        probe.standardError = FileHandle.nullDevice
        guard (try? probe.run()) != nil else { return "no python3 for the PostgreSQL relay between namespaces" }
        probe.waitUntilExit()
        return probe.terminationStatus == 0 ? nil : "python3 cannot import asyncio, which the PostgreSQL relay between namespaces needs"
    }()

    /// Makes the PostgreSQL server at `url`, which listens in the machine's own (root) network
    /// namespace, reachable from host `name`, whose loopback is its own: a relay on the host
    /// listens on its `127.0.0.1` at `url`'s port and forwards every connection through a Unix
    /// socket (the file system is shared by every namespace) to a relay beside the server, which
    /// connects to `url`'s host and port. The server's configuration, the machine's interfaces
    /// and routes are left as they are; to the server, a relayed connection comes from its own
    /// loopback. The relays stop and their socket goes with the hosts (``tearDown()``).
    ///
    /// Call it from one task at a time; a second call for the same host returns at once.
    /// ```swift
    /// for host in ["worker-1", "worker-2"] { store = try await hosts.reachPostgres(PostgresServer.url!, from: host) }
    /// ```
    /// - Parameters:
    ///   - url: The server as the test process reaches it, `postgres://user@host:port/database`.
    ///   - name: The host that is to reach it.
    /// - Returns: The URL host `name` uses: `url` with host `127.0.0.1` and the same port, the
    ///   same for every host, so one topology serves workers on any of them.
    /// - Throws: ``HarnessError`` when `url` names no host, or a relay exits or does not listen
    ///   within ten seconds (with what it printed).
    func reachPostgres(_ url: String, from name: String) async throws -> String {
        guard var components = URLComponents(string: url), let server = components.host, !server.isEmpty else {
            throw HarnessError("cannot relay PostgreSQL to \(name): '\(url)' is not a postgres://user@host:port/database URL")
        }
        let port = components.port ?? 5432
        components.host = "127.0.0.1"
        components.port = port
        guard let reachable = components.string else { throw HarnessError("cannot write the relayed URL for \(url)") }
        guard postgresRelays.withLock({ $0.hosts[name] }) == nil else { return reachable }

        let (directory, socket) = try await postgresRootRelay(server: server, port: port)
        let relay = try await start(URL(fileURLWithPath: "/usr/bin/env"),
                                    ["python3", directory.appendingPathComponent(PostgresRelay.fileName).path,
                                     "tcp-to-unix", "127.0.0.1", String(port), socket.path],
                                    on: name, outputIn: directory, label: "postgres-relay-\(name)")
        postgresRelays.withLock { $0.hosts[name] = relay }
        try await Self.waitUntilListening(relay, "the PostgreSQL relay on \(name) to listen on 127.0.0.1:\(port)")
        return reachable
    }

    /// The relay on the host `name` made reach PostgreSQL, for a test to count its connections.
    func postgresRelay(on name: String) -> ChildProcess? {
        postgresRelays.withLock { $0.hosts[name] }
    }

    /// The root end, started at the first call: its directory and socket.
    /// - Throws: ``HarnessError`` when it was started for another server, or has exited.
    private func postgresRootRelay(server: String, port: Int) async throws -> (URL, URL) {
        let (made, running, relayed) = postgresRelays.withLock { ($0.directory, $0.root, $0.server) }
        if let made, let running {
            guard relayed == "\(server):\(port)" else {
                throw HarnessError("the hosts relay PostgreSQL to \(relayed ?? "?") already, not to \(server):\(port): one server per hosts")
            }
            guard running.isRunning else { throw HarnessError("the PostgreSQL relay beside the server has exited: \(running.stderr)") }
            return (made, made.appendingPathComponent("pg.sock"))
        }
        // Short, for the socket path's ~100 bytes; 0700, so only this user reaches the socket.
        let directory = URL(fileURLWithPath: "/tmp").appendingPathComponent("grove-pg-\(UUID().uuidString.prefix(8).lowercased())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        postgresRelays.withLock { $0.directory = directory }
        let script = directory.appendingPathComponent(PostgresRelay.fileName)
        try PostgresRelay.script.write(to: script, atomically: true, encoding: .utf8)
        let socket = directory.appendingPathComponent("pg.sock")
        let root = try await ChildProcess(URL(fileURLWithPath: "/usr/bin/env"), ["python3", script.path, "unix-to-tcp", socket.path, server, String(port)],
                                          outputIn: directory, label: "postgres-relay-root")
        track(root)
        postgresRelays.withLock {
            $0.root = root
            $0.server = "\(server):\(port)"
        }
        try await Self.waitUntilListening(root, "the PostgreSQL relay beside the server to listen on \(socket.path)")
        return (directory, socket)
    }

    private static func waitUntilListening(_ relay: ChildProcess, _ what: String) async throws {
        try await waitUntil(what, timeout: .seconds(10)) {
            if let status = relay.exitStatus { throw HarnessError("\(what): it exited with \(status): \(relay.stderr)") }
            return relay.stdout.split(separator: "\n").contains("ready")
        }
    }
}
