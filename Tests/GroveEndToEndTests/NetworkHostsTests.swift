import Foundation
import GroveWire
import Testing

extension EndToEnd {
    /// Issue 37, item 5: a topology spread over hosts for real. The coordinator, two workers of
    /// an external pool and the client each run on a host of their own (``NetworkHosts``: network
    /// namespaces on a bridge), over tcp with CURVE. The workers are started as an operator
    /// would: with the command fsm-launch prints, in a directory holding the files it names.
    @Suite(.timeLimit(.minutes(3)), .enabled(if: NetworkHosts.isAvailable, NetworkHosts.skipReason))
    struct NetworkHostsTests {
        static let hostNames = ["coordinator", "worker-1", "worker-2", "client"]
        /// Which host each instance of the pool runs on.
        static let placement = [("pool-1", "worker-1"), ("pool-2", "worker-2")]
        static let keys = (1...8).map { "counter/k\($0)" }

        static func topology(coordinator address: String) -> TopologyFile {
            var topology = TopologyFile(
                name: "hosts", transport: .tcp,
                workers: [.init(name: "pool", count: 2, external: true, key: "keys/pool.key")],
                machines: [.init(name: "counter", type: "Counter", worker: "pool", keyed: true, durability: "state")],
                security: """
                    { "coordinatorKey": "keys/coordinator.key_secret",
                      "clients": [ { "key": "keys/ops.key", "roles": ["read", "send", "admin"] } ] }
                    """,
                keyPairs: ["coordinator", "pool", "ops"],
                clientKey: "ops")
            topology.tcpHost = address
            return topology
        }

        /// A running topology on the hosts: fsm-launch on `coordinator`, the pool's instances
        /// on theirs, and fsm-send from `client`.
        struct Spread {
            let hosts: NetworkHosts
            let directory: URL
            let launch: ChildProcess
            let clients: String

            /// fsm-send on the client host, with the ops key.
            func fsmSend(_ arguments: [String], timeout: Duration = .seconds(20)) async throws -> CommandResult {
                let keys = ["--key-file", directory.appendingPathComponent("keys/ops.key_secret").path,
                            "--coordinator-key", directory.appendingPathComponent("keys/coordinator.key").path]
                return try await hosts.run(Products.send, arguments + ["--endpoint", clients] + keys, on: "client", in: directory,
                                           timeout: timeout)
            }

            /// Increments counter `address` and returns the count it committed.
            func count(_ address: String) async throws -> JSONValue? {
                let result = try await fsmSend(["send", address, "increment"])
                guard result.status == 0 else { throw HarnessError("fsm-send send \(address) increment: \(result)") }
                return try JSONValue(parsing: Data(result.stdout.utf8))["count"]
            }

            func list() async throws -> Listing {
                let result = try await fsmSend(["list"])
                guard result.status == 0 else { throw HarnessError("fsm-send list: \(result)") }
                return try WireJSON.decode(Listing.self, from: Array(result.stdout.utf8))
            }

            /// Starts pool instance `name` on `host` with the command fsm-launch printed for it,
            /// in the host's own directory, after copying there the files the line names.
            @discardableResult
            func startWorker(_ name: String, on host: String) async throws -> ChildProcess {
                let folder = directory.appendingPathComponent(host)
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                // Waits for fsm-launch to print it.
                let arguments = try await Cluster.externalWorkerCommand(name, printedBy: launch)
                let line = try #require(launch.stderr.split(separator: "\n").first { $0.contains("waiting for external worker \(name):") })
                let copies = try #require(line.range(of: " (copy ").flatMap { start in
                    line[start.upperBound...].range(of: " there").map { line[start.upperBound..<$0.lowerBound] }
                }, "fsm-launch names the files to copy: \(line)")
                for path in copies.components(separatedBy: " and ") {
                    let copy = folder.appendingPathComponent(URL(fileURLWithPath: path).lastPathComponent)
                    try? FileManager.default.removeItem(at: copy)
                    try FileManager.default.copyItem(atPath: path, toPath: copy.path)
                }
                return try await hosts.start(Products.worker, arguments + ["--data-dir", folder.appendingPathComponent("data").path],
                                             on: host, outputIn: folder, label: name)
            }
        }

        /// Launches the topology across the hosts and runs `body` with it; stops it after.
        /// `configure` changes the topology first, with the hosts made (a store they reach, say).
        static func withSpread(configure: (NetworkHosts, inout TopologyFile) async throws -> Void = { _, _ in },
                               _ body: (Spread) async throws -> Void) async throws {
            try await withNetworkHosts(hostNames) { hosts in
                let directory = try Cluster.makeDirectory()
                var topology = topology(coordinator: hosts.address(of: "coordinator"))
                try await configure(hosts, &topology)
                for pair in topology.keyPairs {
                    let made = try await runCommand(Products.keys, ["new", pair, "--dir", directory.appendingPathComponent("keys").path], in: directory)
                    guard made.status == 0 else { throw HarnessError("fsm-keys new \(pair): \(made)") }
                }
                let file = try topology.write(in: directory)
                let launch = try await hosts.start(Products.launch, [file.path], on: "coordinator", outputIn: directory, label: "fsm-launch")
                var workers: [(name: String, process: ChildProcess)] = []
                do {
                    var spread = Spread(hosts: hosts, directory: directory, launch: launch, clients: "")
                    for (name, host) in placement { workers.append((name, try await spread.startWorker(name, on: host))) }
                    let clients = try await eventually("the ready line of fsm-launch", timeout: .seconds(30)) { () throws -> String? in
                        if let status = launch.exitStatus { throw HarnessError("fsm-launch exited with \(status):\n\(launch.stderr)") }
                        return launch.stdout.split(separator: "\n").first { $0.hasPrefix("ready ") }.map { String($0.dropFirst(6)) }
                    }
                    spread = Spread(hosts: hosts, directory: directory, launch: launch, clients: clients)
                    try await body(spread)
                } catch {
                    Issue.record(Comment(rawValue: "fsm-launch stderr, last lines:\n" + launch.stderr.split(separator: "\n").suffix(30).joined(separator: "\n")))
                    // A worker that never registered says why in its own output.
                    for (name, process) in workers {
                        let status = process.exitStatus.map { "exited with \($0)" } ?? "running"
                        Issue.record(Comment(rawValue: "worker \(name) (\(status)) stderr, last lines:\n"
                            + process.stderr.split(separator: "\n").suffix(15).joined(separator: "\n")))
                    }
                    throw error
                }
                try? FileManager.default.removeItem(at: directory)
            }
        }

        @Test func eachProcessRunsOnItsOwnHostAndTalksAcrossInterfaces() async throws {
            try await Self.withSpread { spread in
                let coordinator = spread.hosts.address(of: "coordinator")
                #expect(spread.clients.hasPrefix("tcp://\(coordinator):"), "\(spread.clients)")
                // The command fsm-launch printed names the coordinator's address on its host's
                // interface, the key pair's secret by the name the operator copied, and no path
                // of the coordinator's host.
                let printed = try await Cluster.externalWorkerCommand("pool-1", printedBy: spread.launch)
                #expect(printed.starts(with: ["--name", "pool-1", "--coordinator"]), "\(printed)")
                #expect(printed[3].hasPrefix("tcp://\(coordinator):") && printed[4...5] == ["--key-file", "pool.key_secret"], "\(printed)")
                let listing = try await spread.list()
                let registered = listing.workers.filter { $0.registered }.map(\.name)
                #expect(registered == ["pool-1", "pool-2"], "\(listing.workers)")
                // Every process is in the namespace of the host it was started on.
                let launchPid = try #require(listing.coordinatorPid)
                #expect(NetworkHosts.namespaceInode(ofProcess: launchPid) == spread.hosts.namespaceInode(of: "coordinator"))
                for (name, host) in Self.placement {
                    let pid = try #require(listing.workers.first { $0.name == name }?.pid)
                    #expect(NetworkHosts.namespaceInode(ofProcess: pid) == spread.hosts.namespaceInode(of: host), "\(name)")
                    #expect(spread.hosts.namespaceInode(of: host) != spread.hosts.namespaceInode(of: "coordinator"))
                }
                for key in Self.keys { #expect(try await spread.count(key) == .integer(1), "\(key)") }
                for key in Self.keys { #expect(try await spread.count(key) == .integer(2), "\(key)") }
                let counter = try #require(try await spread.list().machines.first { $0.name == "counter" })
                #expect(counter.instanceCount == Self.keys.count)
            }
        }

        /// kill -9 of one external worker on its host: the coordinator declares it lost, its
        /// keys answer `unavailable` while every other key answers as before; started again with
        /// the same command on the same host, it takes its name back with its keys' last state.
        @Test func aKilledWorkerOnAnotherHostComesBackWithItsState() async throws {
            try await Self.withSpread { spread in
                for key in Self.keys { #expect(try await spread.count(key) == .integer(1), "\(key)") }
                let listing = try await spread.list()
                let victim = try #require(listing.workers.first { $0.name == "pool-1" }?.pid)
                kill(victim, SIGKILL)
                try await waitUntil("pool-1 to be declared lost", timeout: .seconds(20)) {
                    (try? await spread.list())?.workers.first { $0.name == "pool-1" }?.registered == false
                }
                // Which keys pool-1 held: those that no longer answer.
                var lost: [String] = []
                for key in Self.keys {
                    let result = try await spread.fsmSend(["state", key, "--timeout", "1"])
                    if result.status == 0 {
                        #expect(result.stdout.contains(#""count":1"#), "\(key): \(result)")
                    } else {
                        #expect(result.stderr.contains("unavailable"), "\(key): \(result)")
                        lost.append(key)
                    }
                }
                let kept = Self.keys.filter { !lost.contains($0) }
                try #require(!lost.isEmpty && !kept.isEmpty, "keys on both workers: lost \(lost)")
                for key in kept { #expect(try await spread.count(key) == .integer(2), "\(key) answers while pool-1 is down") }

                let worker = try await spread.startWorker("pool-1", on: "worker-1")
                try await waitUntil("pool-1 to register again", timeout: .seconds(20)) {
                    (try? await spread.list())?.workers.first { $0.name == "pool-1" }.map { $0.registered && $0.pid == worker.pid } ?? false
                }
                #expect(NetworkHosts.namespaceInode(ofProcess: worker.pid) == spread.hosts.namespaceInode(of: "worker-1"))
                for key in lost { #expect(try await spread.count(key) == .integer(2), "\(key) kept its state through the kill") }
                for key in kept { #expect(try await spread.count(key) == .integer(3), "\(key)") }
            }
        }
    }
}
