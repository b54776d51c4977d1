import Foundation
import GroveWire
import Testing

extension EndToEnd {
    /// Issue 37, item 5: workers on hosts of their own keep their machines in the shared
    /// PostgreSQL store. The server listens on the machine's own loopback; each worker host
    /// reaches it through ``NetworkHosts/reachPostgres(_:from:)`` (a relay through a Unix socket).
    /// The topology is ``NetworkHostsTests``'s with `durability.postgres`: coordinator, two
    /// external workers and the client on four hosts, tcp with CURVE.
    @Suite(.timeLimit(.minutes(3)),
           .enabled(if: NetworkHosts.isAvailable, NetworkHosts.skipReason),
           .enabled(if: PostgresServer.url != nil, PostgresServer.skipReason),
           .enabled(if: NetworkHosts.postgresRelaySkipReason == nil, NetworkHosts.postgresRelaySkipReason ?? ""))
    struct NetworkHostsPostgresTests {
        static let workerHosts = NetworkHostsTests.placement.map(\.1)

        /// The topology under a name of its own (rows of one database are told apart by it),
        /// its store at the URL the worker hosts reach the server by.
        static func postgres(named name: String) -> (NetworkHosts, inout TopologyFile) async throws -> Void {
            { hosts, topology in
                let url = try #require(PostgresServer.url)
                let passwordFile = try #require(PostgresServer.passwordFile)
                var reachable = url
                for host in workerHosts { reachable = try await hosts.reachPostgres(url, from: host) }
                topology.name = name
                topology.durabilitySettings = #"{ "postgres": { "url": "\#(reachable)", "passwordFile": "\#(passwordFile)" } }"#
            }
        }

        /// The counter `address` holds now, read without changing it.
        static func state(_ address: String, in spread: NetworkHostsTests.Spread) async throws -> JSONValue? {
            let result = try await spread.fsmSend(["state", address])
            guard result.status == 0 else { throw HarnessError("fsm-send state \(address): \(result)") }
            return try JSONValue(parsing: Data(result.stdout.utf8))["count"]
        }

        @Test func aHostReachesPostgreSQLOnlyThroughItsRelayWhichGoesWithTheHosts() async throws {
            let url = try #require(PostgresServer.url)
            let password = try String(contentsOfFile: try #require(PostgresServer.passwordFile), encoding: .utf8)
                .trimmingCharacters(in: .whitespacesAndNewlines)
            let directory = try Cluster.makeDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            var relays: [ChildProcess] = []
            var relayDirectory: URL?
            try await withNetworkHosts(["worker", "other"]) { hosts in
                func select(_ url: String) async throws -> CommandResult {
                    try await hosts.run(URL(fileURLWithPath: "/usr/bin/env"), ["psql", url, "-tAq", "-c", "SELECT 41 + 1"], on: "worker",
                                        in: directory, environment: ["PGPASSWORD": password, "PGCONNECT_TIMEOUT": "5"])
                }
                // The host's loopback is its own: the server is not there.
                let before = try await select(url)
                #expect(before.status != 0, "\(before)")
                let reachable = try await hosts.reachPostgres(url, from: "worker")
                #expect(reachable.contains("@127.0.0.1:"), "\(reachable)")
                #expect(try await hosts.reachPostgres(url, from: "worker") == reachable, "a second call changes nothing")
                let after = try await select(reachable)
                #expect(after.status == 0 && after.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "42", "\(after)")
                let relay = try #require(hosts.postgresRelay(on: "worker"))
                #expect(PostgresRelay.accepted(by: relay) == 1, "\(relay.stdout)")
                #expect(NetworkHosts.namespaceInode(ofProcess: relay.pid) == hosts.namespaceInode(of: "worker"))
                // What it cannot do says so: a URL without a host, a second server for the same hosts.
                let noHost = await #expect(throws: HarnessError.self) { try await hosts.reachPostgres("postgres:///grove", from: "other") }
                #expect(noHost?.description.contains("is not a postgres://user@host:port/database URL") == true, "\(String(describing: noHost))")
                let otherServer = await #expect(throws: HarnessError.self) {
                    try await hosts.reachPostgres("postgres://grove@127.0.0.1:5499/grove", from: "other")
                }
                #expect(otherServer?.description.contains("already") == true, "\(String(describing: otherServer))")
                #expect(hosts.postgresRelay(on: "other") == nil)
                relays = [relay] + (hosts.postgresRelays.withLock { $0.root }.map { [$0] } ?? [])
                relayDirectory = hosts.postgresRelays.withLock { $0.directory }
            }
            #expect(relays.count == 2)
            for relay in relays { #expect(!relay.isRunning, "\(relay.arguments) outlived the hosts") }
            let socketDirectory = try #require(relayDirectory)
            #expect(!FileManager.default.fileExists(atPath: socketDirectory.path), "the relays' directory goes with the hosts")
        }

        /// kill -9 of one external worker on its host: started again there with the command
        /// fsm-launch printed (nothing of its data directory is needed), its keyed counters come
        /// back from PostgreSQL with the counts their last acknowledged events committed.
        @Test func aKilledWorkerOnAnotherHostComesBackWithItsStateFromPostgreSQL() async throws {
            let name = "pg-\(UUID().uuidString.prefix(8).lowercased())"
            defer { PostgresServer.drop(name) }
            try await NetworkHostsTests.withSpread(configure: Self.postgres(named: name)) { spread in
                // Counts that differ from key to key, so a record read back under the wrong key shows.
                var acknowledged: [String: JSONValue] = [:]
                for (index, key) in NetworkHostsTests.keys.enumerated() {
                    for _ in 0...(index % 3) { acknowledged[key] = try await spread.count(key) }
                    #expect(acknowledged[key] == .integer(Int64(index % 3 + 1)), "\(key)")
                }
                #expect(PostgresServer.count("grove_machines", topology: name) == NetworkHostsTests.keys.count)
                for host in Self.workerHosts {
                    let relay = try #require(spread.hosts.postgresRelay(on: host))
                    #expect(PostgresRelay.accepted(by: relay) >= 1, "the worker on \(host) reached the store through its relay")
                }
                let relayed = PostgresRelay.accepted(by: try #require(spread.hosts.postgresRelay(on: "worker-1")))

                let victim = try #require(try await spread.list().workers.first { $0.name == "pool-1" }?.pid)
                kill(victim, SIGKILL)
                try await waitUntil("pool-1 to be declared lost", timeout: .seconds(20)) {
                    (try? await spread.list())?.workers.first { $0.name == "pool-1" }?.registered == false
                }
                var lost: [String] = []
                for key in NetworkHostsTests.keys {
                    let result = try await spread.fsmSend(["state", key, "--timeout", "1"])
                    if result.status != 0 {
                        #expect(result.stderr.contains("unavailable"), "\(key): \(result)")
                        lost.append(key)
                    }
                }
                try #require(!lost.isEmpty && lost.count < NetworkHostsTests.keys.count, "keys on both workers: lost \(lost)")

                // A new data directory: what comes back can only come from the database.
                try? FileManager.default.removeItem(at: spread.directory.appendingPathComponent("worker-1/data"))
                let worker = try await spread.startWorker("pool-1", on: "worker-1")
                try await waitUntil("pool-1 to register again", timeout: .seconds(20)) {
                    (try? await spread.list())?.workers.first { $0.name == "pool-1" }.map { $0.registered && $0.pid == worker.pid } ?? false
                }
                #expect(NetworkHosts.namespaceInode(ofProcess: worker.pid) == spread.hosts.namespaceInode(of: "worker-1"))
                // Its relay counts the connection once it has passed it on, which may be after the
                // worker registered: waited for, not read once.
                let relay = try #require(spread.hosts.postgresRelay(on: "worker-1"))
                try await waitUntil("the new process to reach the store through the relay", timeout: .seconds(20)) {
                    PostgresRelay.accepted(by: relay) > relayed
                }
                for key in NetworkHostsTests.keys {
                    #expect(try await Self.state(key, in: spread) == acknowledged[key], "\(key) (lost with pool-1: \(lost.contains(key)))")
                }
                for key in lost {
                    guard case .integer(let count)? = acknowledged[key] else { continue }
                    #expect(try await spread.count(key) == .integer(count + 1), "\(key) counts on from its stored state")
                }
                let files = FileManager.default.enumerator(atPath: spread.directory.path)?.compactMap { $0 as? String } ?? []
                #expect(!files.contains { $0.hasSuffix(".sqlite") }, "\(files)")
            }
        }
    }
}
