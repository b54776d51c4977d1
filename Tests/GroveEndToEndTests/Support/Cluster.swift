import Foundation
import GroveWire
import Synchronization
import Testing

/// A running `fsm-launch` with its topology, in a temp dir of its own: what every end-to-end
/// test talks to. Create one with ``withCluster(_:sourceLocation:_:)``, which always tears it
/// down.
final class Cluster: Sendable {
    let directory: URL
    let topology: TopologyFile
    let launch: ChildProcess
    /// The clients endpoint from the `ready` line.
    let clients: String
    /// Processes the test started besides fsm-launch (watchers, external workers).
    private let extras = Mutex<[ChildProcess]>([])

    private init(directory: URL, topology: TopologyFile, launch: ChildProcess, clients: String, extras: [ChildProcess]) {
        self.directory = directory
        self.topology = topology
        self.launch = launch
        self.clients = clients
        self.extras.withLock { $0 = extras }
    }

    /// Writes the topology, starts fsm-launch and waits for its `ready` line.
    /// - Throws: ``HarnessError`` with fsm-launch's stderr when it exits or is not ready in time.
    /// - Parameter directory: Where to launch it: a new temp dir unless given (the directory of a
    ///   cluster launched before, to relaunch the same topology over its data).
    static func start(_ topology: TopologyFile, in directory: URL? = nil, readyTimeout: Duration = .seconds(30)) async throws -> Cluster {
        let directory = try directory ?? makeDirectory()
        for pair in topology.keyPairs {
            let made = try await runCommand(Products.keys, ["new", pair, "--dir", directory.appendingPathComponent("keys").path], in: directory)
            guard made.status == 0 else { throw HarnessError("fsm-keys new \(pair) failed: \(made)") }
        }
        let file = try topology.write(in: directory)
        let launch = try await ChildProcess(Products.launch, [file.path], outputIn: directory, label: "fsm-launch",
                                            environment: topology.environment(in: directory))
        var externals: [ChildProcess] = []
        do {
            // fsm-launch is ready once every worker registered, external ones included: start
            // those by hand, as an operator would, with the command fsm-launch prints.
            for group in topology.workers where group.external {
                for name in group.count == 1 ? [group.name] : (1...group.count).map({ "\(group.name)-\($0)" }) {
                    var arguments = try await externalWorkerCommand(name, printedBy: launch)
                    if let key = group.key, let index = arguments.firstIndex(of: "--key-file") {
                        arguments[index + 1] = directory.appendingPathComponent(key + "_secret").path
                    }
                    externals.append(try await ChildProcess(Products.worker, arguments + group.arguments,
                                                            outputIn: directory, label: "worker-\(name)"))
                }
            }
            let endpoint = try await eventually("the ready line of fsm-launch", timeout: readyTimeout) { () throws -> String? in
                if let line = launch.stdout.split(separator: "\n").first(where: { $0.hasPrefix("ready ") }) {
                    return String(line.dropFirst("ready ".count))
                }
                if let status = launch.exitStatus {
                    throw HarnessError("fsm-launch exited with \(status) before it was ready:\n\(launch.stderr)")
                }
                return nil
            }
            return Cluster(directory: directory, topology: topology, launch: launch, clients: endpoint, extras: externals)
        } catch {
            for process in externals { await process.stopped(grace: .seconds(1)) }
            await launch.stopped()
            // An external worker that exited at once (a bad argument) says why only here.
            let workers = externals.map { "\n\($0.stderrURL.lastPathComponent) (exit \($0.exitStatus.map(String.init) ?? "none yet")):\n\($0.stderr.suffix(1500))" }
            throw HarnessError("\(error)\nfsm-launch stderr:\n\(launch.stderr.suffix(4000))\(workers.joined())")
        }
    }

    /// The arguments fsm-launch tells the operator to start external worker `name` with (its
    /// "waiting for external worker" line): the real endpoint, even for a port the system chose.
    static func externalWorkerCommand(_ name: String, printedBy launch: ChildProcess) async throws -> [String] {
        let marker = "waiting for external worker \(name): start it with `fsm-worker "
        return try await eventually("fsm-launch's command line for external worker \(name)") { () throws -> [String]? in
            guard let line = launch.stderr.split(separator: "\n").first(where: { $0.contains(marker) }),
                  let start = line.range(of: marker)?.upperBound, let end = line[start...].firstIndex(of: "`") else {
                if let status = launch.exitStatus { throw HarnessError("fsm-launch exited with \(status):\n\(launch.stderr)") }
                return nil
            }
            // The key is quoted for a shell (Z85 has `$`, `&`, `<`…); no shell runs it here.
            return line[start..<end].split(separator: " ").map { $0.replacingOccurrences(of: "'", with: "") }
        }
    }

    static func makeDirectory() throws -> URL {
        // Short: ipc endpoints live here, and a unix socket path has ~100 bytes at most.
        let directory = URL(fileURLWithPath: "/tmp").appendingPathComponent("grove-e2e-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    // MARK: - fsm-send

    /// Runs `fsm-send <arguments> --endpoint <clients>`.
    func fsmSend(_ arguments: [String], timeout: Duration = .seconds(20)) async throws -> CommandResult {
        try await fsmSend(arguments, as: topology.clientKey, timeout: timeout)
    }

    /// Runs `fsm-send <arguments> --endpoint <clients>` with key pair `key` (from
    /// ``TopologyFile/keyPairs``; `nil`: no key).
    func fsmSend(_ arguments: [String], as key: String?, timeout: Duration = .seconds(20)) async throws -> CommandResult {
        try await runCommand(Products.send, arguments + ["--endpoint", clients] + keyArguments(key), in: directory, timeout: timeout,
                             environment: topology.environment(in: directory))
    }

    /// `--key-file … --coordinator-key …` for key pair `key`; none for `nil`.
    func keyArguments(_ key: String?) -> [String] {
        key.map { ["--key-file", keyPath($0, secret: true), "--coordinator-key", keyPath("coordinator", secret: false)] } ?? []
    }

    /// The path of a key file made for this cluster.
    func keyPath(_ pair: String, secret: Bool) -> String {
        directory.appendingPathComponent("keys/\(pair).key" + (secret ? "_secret" : "")).path
    }

    /// Runs an fsm-send command that must succeed and print one JSON value.
    func json(_ arguments: [String]) async throws -> JSONValue {
        let result = try await fsmSend(arguments)
        guard result.status == 0 else {
            throw HarnessError("fsm-send \(arguments.joined(separator: " ")) failed: \(result)")
        }
        do {
            return try JSONValue(parsing: Data(result.stdout.utf8))
        } catch {
            throw HarnessError("fsm-send \(arguments.joined(separator: " ")) printed no JSON: \(result)")
        }
    }

    /// Sends an event and returns the state it committed.
    @discardableResult
    func send(_ address: String, _ event: String) async throws -> JSONValue {
        try await json(["send", address, event])
    }

    /// A machine's current state.
    func state(_ address: String) async throws -> JSONValue {
        try await json(["state", address])
    }

    /// Polls a machine's state until `predicate` holds.
    @discardableResult
    func waitForState(_ address: String, _ what: String, timeout: Duration = .seconds(15),
                      _ predicate: @escaping (JSONValue) -> Bool) async throws -> JSONValue {
        var last: JSONValue?
        do {
            return try await eventually("\(address) to be \(what)", timeout: timeout, interval: .milliseconds(50)) {
                let state = try await state(address)
                last = state
                return predicate(state) ? state : nil
            }
        } catch let error as HarnessError {
            throw HarnessError("\(error); last state: \(last.map { "\($0)" } ?? "none")")
        }
    }

    /// The topology's machines and workers, as `fsm-send list` prints them.
    func list() async throws -> Listing {
        let result = try await fsmSend(["list"])
        guard result.status == 0 else { throw HarnessError("fsm-send list failed: \(result)") }
        return try WireJSON.decode(Listing.self, from: Array(result.stdout.utf8))
    }

    /// The pid of a registered worker instance.
    func workerPID(_ name: String) async throws -> Int32 {
        let listing = try await list()
        guard let worker = listing.workers.first(where: { $0.name == name }), worker.registered, let pid = worker.pid else {
            throw HarnessError("worker \(name) is not registered: \(listing.workers)")
        }
        return pid
    }

    /// Kills worker instance `name` with SIGKILL and waits until it is registered again as
    /// another process (its supervisor restarts it); returns the new pid.
    @discardableResult
    func killAndAwaitRestart(_ name: String, timeout: Duration = .seconds(30)) async throws -> Int32 {
        let before = try await workerPID(name)
        kill(before, SIGKILL)
        var after = before
        try await waitUntil("\(name) to come back as a new process", timeout: timeout) {
            guard let pid = try? await workerPID(name), pid != before else { return false }
            after = pid
            return true
        }
        return after
    }

    // MARK: - Watching and logs

    /// Starts `fsm-send watch` for `prefixes` and returns once it demonstrably receives: the
    /// harness bumps the `probe` counter until the watcher sees it (a ZeroMQ subscription takes
    /// a moment to reach the publisher, and events published before that are not delivered).
    func watch(_ prefixes: [String] = [], options: [String] = []) async throws -> EventWatcher {
        let topics = prefixes.isEmpty ? [] : prefixes + ["state:" + TopologyFile.probe]
        let process = try await ChildProcess(Products.send, ["watch"] + topics + options + ["--endpoint", clients]
                                                 + keyArguments(topology.clientKey),
                                       outputIn: directory, label: "watch")
        extras.withLock { $0.append(process) }
        let watcher = EventWatcher(process: process)
        try await waitUntil("the watcher to receive probe state changes", timeout: .seconds(20), interval: .milliseconds(200)) {
            guard process.isRunning else {
                throw HarnessError("fsm-send watch exited with \(process.exitStatus ?? -1): \(process.stderr)")
            }
            if !watcher.events(where: { $0.topic == "state:" + TopologyFile.probe }).isEmpty { return true }
            try await send(TopologyFile.probe, "increment")
            return false
        }
        return watcher
    }

    /// Everything fsm-launch and its workers logged so far.
    var log: String { launch.stderr }

    /// Waits until at least `count` log lines contain every one of `needles`.
    func waitForLog(_ needles: String..., count: Int = 1, timeout: Duration = .seconds(15)) async throws {
        try await waitUntil("\(count) log line(s) with \(needles)", timeout: timeout) {
            log.split(separator: "\n").filter { line in needles.allSatisfy { line.contains($0) } }.count >= count
        }
    }

    /// The external worker processes the harness started, by instance name (latest first).
    func externalWorker(_ name: String) -> ChildProcess? {
        extras.withLock { $0 }.last { $0.arguments.contains(name) && $0.arguments.first == "fsm-worker" }
    }

    /// Starts an instance of an external worker group by hand.
    func startExternalWorker(_ name: String, arguments: [String] = []) async throws -> ChildProcess {
        let workers = try await workersEndpoint()
        let process = try await ChildProcess(Products.worker, ["--name", name, "--coordinator", workers] + arguments,
                                       outputIn: directory, label: "worker-\(name)")
        extras.withLock { $0.append(process) }
        return process
    }

    /// The workers endpoint: for ipc in the test's directory; for tcp the port the coordinator
    /// bound, read back from the listing.
    func workersEndpoint() async throws -> String {
        switch topology.transport {
        case .ipc: return "ipc://\(directory.path)/workers.ipc"
        case .runtimeDirectory: return "ipc://\(TopologyFile.runtimeDirectory(in: directory))/\(topology.name)/workers"
        case .tcp: break
        }
        guard let endpoint = try await list().workersEndpoint else { throw HarnessError("the listing names no workers endpoint") }
        return endpoint
    }

    // MARK: - Teardown

    /// Stops everything: watchers and external workers, then fsm-launch with SIGTERM (SIGKILL if
    /// it does not stop), then checks that none of its worker processes outlived it.
    /// The waiting happens on a thread of its own, and is not cancellable.
    /// - Returns: Problems found, for the test to report.
    func shutdown() async -> [String] {
        await onDedicatedThread { self.shutdownBlocking() }
    }

    private func shutdownBlocking() -> [String] {
        var problems: [String] = []
        for process in extras.withLock({ $0 }) { process.stop(grace: .seconds(2)) }
        let workers = ProcessTable.children(of: launch.pid)
        if !launch.stop(grace: .seconds(10)) {
            problems.append("fsm-launch did not stop within 10 s of SIGTERM; killed it")
        }
        let survivors = workers.filter { entry in
            !waitBlocking(timeout: .seconds(5)) { !ProcessTable.isAlive(entry) }
        }
        for entry in survivors {
            kill(entry.pid, SIGKILL)
            problems.append("worker process \(entry.pid) (\(entry.command)) outlived fsm-launch: an orphan")
        }
        return problems
    }

    /// Removes the cluster's directory, logs included; kept when `GROVE_TEST_KEEP` is set, so
    /// that the logs of a run that failed without throwing (an `#expect`) can be read.
    func removeDirectory() {
        if ProcessInfo.processInfo.environment["GROVE_TEST_KEEP"] != nil { return }
        try? FileManager.default.removeItem(at: directory)
    }
}

/// Launches `topology`, runs `body` with it, and tears everything down whatever happens: no
/// process of the test outlives it, and orphaned workers fail the test.
func withCluster<T>(
    _ topology: TopologyFile,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: (Cluster) async throws -> T
) async throws -> T {
    let cluster = try await Cluster.start(topology)
    let result: T
    do {
        result = try await body(cluster)
    } catch {
        for problem in await cluster.shutdown() { Issue.record(Comment(rawValue: problem), sourceLocation: sourceLocation) }
        Issue.record(Comment(rawValue: "fsm-launch stderr (\(cluster.launch.stderrURL.path)), last lines:\n"
            + cluster.log.split(separator: "\n").suffix(40).joined(separator: "\n")), sourceLocation: sourceLocation)
        throw error
    }
    for problem in await cluster.shutdown() { Issue.record(Comment(rawValue: problem), sourceLocation: sourceLocation) }
    cluster.removeDirectory()
    return result
}

/// Reads /proc: which processes a process started, and whether they still run.
enum ProcessTable {
    struct Entry: Hashable {
        var pid: Int32
        /// Clock ticks after boot when it started: tells a reused pid from the original.
        var startTime: UInt64
        var command: String
    }

    /// `pid`, parent pid, state and start time from /proc/<pid>/stat.
    static func stat(_ pid: Int32) -> (ppid: Int32, state: Character, startTime: UInt64, command: String)? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let open = text.firstIndex(of: "("), let close = text.lastIndex(of: ")") else { return nil }
        let command = String(text[text.index(after: open)..<close])
        let fields = text[text.index(close, offsetBy: 2)...].split(separator: " ")
        // After "(comm) ": state is field 3 of stat, ppid 4, starttime 22.
        guard fields.count > 19, let state = fields[0].first, let ppid = Int32(fields[1]), let start = UInt64(fields[19]) else {
            return nil
        }
        return (ppid, state, start, command)
    }

    /// The live children of `parent`.
    static func children(of parent: Int32) -> [Entry] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return names.compactMap(Int32.init).compactMap { pid in
            guard let info = stat(pid), info.ppid == parent, info.state != "Z" else { return nil }
            return Entry(pid: pid, startTime: info.startTime, command: info.command)
        }
    }

    static func isAlive(_ entry: Entry) -> Bool {
        guard let info = stat(entry.pid) else { return false }
        return info.startTime == entry.startTime && info.state != "Z"
    }

    static func isAlive(_ pid: Int32) -> Bool {
        guard let info = stat(pid) else { return false }
        return info.state != "Z"
    }

    /// How long `pid` has run, as the kernel counts it (its start time against /proc/uptime,
    /// to the clock tick, 10 ms); nil when it is gone.
    static func age(_ pid: Int32) -> Duration? {
        guard let info = stat(pid), info.state != "Z",
              let uptime = try? String(contentsOfFile: "/proc/uptime", encoding: .utf8),
              let seconds = uptime.split(separator: " ").first.flatMap({ Double($0) }) else { return nil }
        let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))
        return .milliseconds(Int64((seconds - Double(info.startTime) / ticksPerSecond) * 1000))
    }
}
