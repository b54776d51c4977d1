import Foundation
import Synchronization
import Testing

/// Hosts for a test, made of Linux network namespaces: each host a namespace of its own with
/// one interface, `eth0`, at `10.77.0.<n>/24`, all joined by a bridge in one more namespace
/// (the hub). Traffic between hosts is real tcp across interfaces; nothing reaches the machine's
/// own interfaces or routes, which the harness never touches (every link is made inside the
/// namespaces). Each host has its own loopback too: `127.0.0.1` on one host is not another's.
///
/// Names are `grove-<pid>-<run>-<host>`, unique per test run; ``tearDown()`` stops what runs in
/// them and deletes them, and a later run deletes those of a test process that died before it
/// could (its pid gone). Needs root and iproute2's `ip`: ``skipReason`` says why not, for
/// `.enabled(if: NetworkHosts.isAvailable, NetworkHosts.skipReason)`. A host reaches the test
/// PostgreSQL server, on the machine's own loopback, through ``reachPostgres(_:from:)``.
///
/// ```swift
/// try await withNetworkHosts(["coordinator", "worker"]) { hosts in
///     let launch = try await hosts.start(Products.launch, [file.path], on: "coordinator", outputIn: directory, label: "fsm-launch")
///     let address = hosts.address(of: "coordinator")   // "10.77.0.1"
/// }
/// ```
final class NetworkHosts: Sendable {
    /// One host: its name in the test, its namespace and its address.
    struct Host: Sendable {
        var name: String
        var namespace: String
        var address: String
    }

    let hosts: [Host]
    /// The namespace holding the bridge.
    let hub: String
    private let started = Mutex<[ChildProcess]>([])
    /// The PostgreSQL relays ``reachPostgres(_:from:)`` started; see NetworkHosts+Postgres.swift.
    let postgresRelays = Mutex(PostgresRelays())

    private init(hosts: [Host], hub: String) {
        self.hosts = hosts
        self.hub = hub
    }

    /// iproute2's `ip`, where Debian and others put it.
    static let ip: URL? = ["/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"]
        .first { FileManager.default.isExecutableFile(atPath: $0) }.map(URL.init(fileURLWithPath:))

    /// Why hosts cannot be made here, or `nil` when they can (tried once: a namespace made and
    /// deleted).
    static let skipReason: Comment? = {
        guard geteuid() == 0 else {
            return "network namespaces need root (CAP_SYS_ADMIN and CAP_NET_ADMIN); run the tests as root, or in a container with those capabilities"
        }
        guard ip != nil else { return "no `ip` (iproute2) in /usr/sbin, /sbin, /usr/bin or /bin; install Debian's iproute2" }
        let probe = "grove-\(getpid())-probe"
        do {
            try run(["netns", "add", probe])
            _ = try? run(["netns", "del", probe])
            return nil
        } catch {
            return Comment(rawValue: "cannot make a network namespace here (\(error)); a container needs CAP_SYS_ADMIN and CAP_NET_ADMIN")
        }
    }()

    static var isAvailable: Bool { skipReason == nil }

    /// Makes one host per name, `10.77.0.1` for the first and so on, reachable from one another.
    /// - Throws: ``HarnessError`` naming the `ip` command that failed (what was made is deleted).
    static func make(_ names: [String]) async throws -> NetworkHosts {
        precondition(!names.isEmpty && names.count < 250 && Set(names).count == names.count, "1 to 249 distinct host names")
        if let skipReason { throw HarnessError("network hosts are not available: \(skipReason)") }
        return try await onDedicatedThread { Result { try makeBlocking(names) } }.get()
    }

    private static func makeBlocking(_ names: [String]) throws -> NetworkHosts {
        removeStale()
        let run = "grove-\(getpid())-\(UUID().uuidString.prefix(4).lowercased())"
        let hosts = names.enumerated().map { index, name in
            Host(name: name, namespace: "\(run)-\(name)", address: "10.77.0.\(index + 1)")
        }
        let made = NetworkHosts(hosts: hosts, hub: "\(run)-hub")
        do {
            try Self.run(["netns", "add", made.hub])
            try Self.run(["-n", made.hub, "link", "add", "br0", "type", "bridge"])
            try Self.run(["-n", made.hub, "link", "set", "br0", "up"])
            for (index, host) in hosts.enumerated() {
                try Self.run(["netns", "add", host.namespace])
                try Self.run(["-n", host.namespace, "link", "set", "lo", "up"])
                // Made inside the hub and moved straight into the host: never on the machine's own.
                try Self.run(["-n", made.hub, "link", "add", "v\(index)", "type", "veth", "peer", "name", "eth0", "netns", host.namespace])
                try Self.run(["-n", made.hub, "link", "set", "v\(index)", "master", "br0", "up"])
                try Self.run(["-n", host.namespace, "addr", "add", host.address + "/24", "dev", "eth0"])
                try Self.run(["-n", host.namespace, "link", "set", "eth0", "up"])
            }
        } catch {
            made.tearDownBlocking()
            throw error
        }
        return made
    }

    /// The host named `name` in ``make(_:)``.
    func host(_ name: String) -> Host {
        guard let host = hosts.first(where: { $0.name == name }) else { preconditionFailure("no host '\(name)' among \(hosts.map(\.name))") }
        return host
    }

    /// The address of host `name`, e.g. `10.77.0.2`.
    func address(of name: String) -> String { host(name).address }

    /// The inode of host `name`'s network namespace: `/proc/<pid>/ns/net` of a process in it
    /// names the same.
    func namespaceInode(of name: String) -> UInt64? {
        var info = stat()
        guard stat("/run/netns/" + host(name).namespace, &info) == 0 else { return nil }
        return UInt64(info.st_ino)
    }

    /// The inode of the network namespace process `pid` runs in.
    static func namespaceInode(ofProcess pid: Int32) -> UInt64? {
        var info = stat()
        guard stat("/proc/\(pid)/ns/net", &info) == 0 else { return nil }
        return UInt64(info.st_ino)
    }

    /// Starts `executable` on host `name` (`ip netns exec`, which execs it: the process's pid is
    /// the one returned). It is stopped by ``tearDown()`` if still running.
    func start(_ executable: URL, _ arguments: [String], on name: String, outputIn directory: URL, label: String,
               environment: [String: String] = [:]) async throws -> ChildProcess {
        guard let ip = Self.ip else { throw HarnessError("no `ip` to run \(label) on \(name) with") }
        let process = try await ChildProcess(ip, ["netns", "exec", host(name).namespace, executable.path] + arguments,
                                             outputIn: directory, label: label, environment: environment)
        track(process)
        return process
    }

    /// Has ``tearDown()`` stop `process`, which runs for the hosts outside them (a relay's root end).
    func track(_ process: ChildProcess) {
        started.withLock { $0.append(process) }
    }

    /// Runs a command on host `name` to completion.
    /// - Throws: ``HarnessError`` when it is still running after `timeout` (it is killed then).
    func run(_ executable: URL, _ arguments: [String], on name: String, in directory: URL, timeout: Duration = .seconds(20),
             environment: [String: String] = [:]) async throws -> CommandResult {
        let child = try await start(executable, arguments, on: name, outputIn: directory, label: executable.lastPathComponent,
                                    environment: environment)
        return try await child.result(within: timeout, what: "\(executable.lastPathComponent) \(arguments.joined(separator: " ")) on \(name)")
    }

    /// Stops every process started on the hosts (SIGTERM, SIGKILL after two seconds), then any
    /// other still in their namespaces (children they started), and deletes the namespaces.
    /// Not cancellable.
    /// - Returns: Problems found (a process that had to be killed), for the test to report.
    @discardableResult
    func tearDown() async -> [String] {
        await onDedicatedThread { self.tearDownBlocking() }
    }

    @discardableResult
    private func tearDownBlocking() -> [String] {
        var problems: [String] = []
        for process in started.withLock({ $0 }) where process.isRunning {
            if !process.stop(grace: .seconds(2)) { problems.append("\(process.arguments.dropFirst(3).joined(separator: " ")) ignored SIGTERM; killed") }
        }
        for namespace in hosts.map(\.namespace) + [hub] {
            for pid in Self.pids(in: namespace) {
                kill(pid, SIGKILL)
                problems.append("process \(pid) was still running in \(namespace); killed")
            }
            _ = try? Self.run(["netns", "del", namespace])
        }
        if let directory = postgresRelays.withLock({ $0.directory }) { try? FileManager.default.removeItem(at: directory) }
        return problems
    }

    /// The processes in `namespace` (`ip netns pids`).
    static func pids(in namespace: String) -> [Int32] {
        ((try? run(["netns", "pids", namespace])) ?? "").split(separator: "\n").compactMap { Int32($0) }
    }

    /// Deletes the namespaces of test processes that died before they tore theirs down.
    private static func removeStale() {
        let names = ((try? run(["netns", "list"])) ?? "").split(separator: "\n").compactMap { $0.split(separator: " ").first }
        for name in names where name.hasPrefix("grove-") {
            guard let pid = name.split(separator: "-").dropFirst().first.flatMap({ Int32($0) }), pid != getpid(),
                  kill(pid, 0) != 0, errno == ESRCH else { continue }
            for stray in pids(in: String(name)) { kill(stray, SIGKILL) }
            _ = try? run(["netns", "del", String(name)])
        }
    }

    /// Runs `ip arguments`, blocking.
    /// - Returns: What it printed.
    /// - Throws: ``HarnessError`` with its stderr when it fails.
    @discardableResult
    static func run(_ arguments: [String]) throws -> String {
        guard let ip else { throw HarnessError("no `ip` (iproute2)") }
        let process = Process()
        process.executableURL = ip
        process.arguments = arguments
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // Small outputs: read to the end, then reap.
        let printed = out.fileHandleForReading.readDataToEndOfFile()
        let complaint = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw HarnessError("ip \(arguments.joined(separator: " ")) failed (\(process.terminationStatus)): "
                + String(decoding: complaint, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
        }
        return String(decoding: printed, as: UTF8.self)
    }
}

/// Makes hosts named `names`, runs `body` with them, and tears them down whatever happens: no
/// process started on them outlives it, and no namespace stays.
func withNetworkHosts<T>(
    _ names: [String],
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: (NetworkHosts) async throws -> T
) async throws -> T {
    let hosts = try await NetworkHosts.make(names)
    let result: T
    do {
        result = try await body(hosts)
    } catch {
        await hosts.tearDown()
        throw error
    }
    for problem in await hosts.tearDown() { Issue.record(Comment(rawValue: problem), sourceLocation: sourceLocation) }
    return result
}
