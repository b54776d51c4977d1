import Foundation
import GroveWire
import Testing

extension EndToEnd {
    /// Issue 37 item 2: a pool of two workers, a keyed durable machine in PostgreSQL with
    /// `durability.handoff`. A worker lost past the grace period has its keyed instances
    /// answer from the other with their last committed state; when it comes back, placement
    /// is restored; a worker paused past the grace and resumed keeps no live copy of what
    /// was adopted. Needs the server `Scripts/test.sh` starts (GROVE_TEST_POSTGRES_URL).
    @Suite(.timeLimit(.minutes(3)), .enabled(if: PostgresServer.url != nil, PostgresServer.skipReason))
    struct HandoffTests {
        static let graceMs = 1000
        static let keys = (0..<16).map { "counter/k\($0)" }

        /// - Parameter external: Whether the test starts the pool's workers (fsm-launch kills a
        ///   worker of its own that is lost while alive, a paused one included).
        static func pool(supervision: String? = nil, external: Bool = false) throws -> TopologyFile {
            let url = try #require(PostgresServer.url)
            let passwordFile = try #require(PostgresServer.passwordFile)
            // Started by hand, a worker is given the password file as fsm-launch gives its own.
            let pool = TopologyFile.WorkerGroup(name: "pool", count: 2, arguments: external ? ["--store-password-file", passwordFile] : [],
                                                external: external, supervision: supervision)
            var topology = TopologyFile(
                name: "ho-\(UUID().uuidString.prefix(8).lowercased())", transport: .ipc,
                workers: [.init(name: "edge"), .init(name: "data-io"), pool],
                machines: [.init(name: "counter", type: "Counter", worker: "pool", keyed: true, durability: "state"),
                           .init(name: "poller", type: "PollingService", worker: "pool", keyed: true, durability: "state")],
                io: [("FetchData", "data-io")],
                heartbeat: (intervalMs: 100, timeoutMs: 1000))
            topology.durabilitySettings = #"""
                { "postgres": { "url": "\#(url)", "passwordFile": "\#(passwordFile)" }, "handoff": { "graceMs": \#(graceMs) } }
                """#
            return topology
        }

        /// Which worker the store says owns each machine of `topology`.
        static func owners(_ topology: TopologyFile) -> [String: String] {
            let rows = PostgresServer.psql("SELECT address || ' ' || owner FROM grove_machines WHERE topology = '\(topology.name)'") ?? ""
            return Dictionary(rows.split(separator: "\n").compactMap { row -> (String, String)? in
                let parts = row.split(separator: " ")
                return parts.count == 2 ? (String(parts[0]), String(parts[1])) : nil
            }, uniquingKeysWith: { first, _ in first })
        }

        /// Sends each key an `add` of a different amount: the counts acknowledged, by key.
        static func fill(_ cluster: Cluster) async throws -> [String: Int] {
            var acknowledged: [String: Int] = [:]
            for (index, key) in keys.enumerated() {
                #expect(try await cluster.send(key, #"{"add":{"_0":\#(index + 1)}}"#) == json(#"{"count":\#(index + 1)}"#))
                acknowledged[key] = index + 1
            }
            return acknowledged
        }

        /// The keys the store says `worker` owns; at least one (the hash spreads 16 keys over two).
        static func keys(of worker: String, in topology: TopologyFile) throws -> [String] {
            let owners = owners(topology)
            let mine = keys.filter { owners[$0] == worker }
            try #require(!mine.isEmpty, "no key on \(worker): \(owners)")
            return mine
        }

        /// What the external worker `name` wrote to stderr (the harness keeps it in the
        /// cluster's directory).
        static func stderr(of name: String, in cluster: Cluster) -> String {
            let files = (try? FileManager.default.contentsOfDirectory(atPath: cluster.directory.path)) ?? []
            return files.filter { $0.hasPrefix("worker-\(name)-") && $0.hasSuffix(".err") }.map { file in
                (try? String(contentsOf: cluster.directory.appendingPathComponent(file), encoding: .utf8)) ?? ""
            }.joined()
        }

        static func count(_ state: JSONValue) -> Int? {
            if case .integer(let count)? = state["count"] { return Int(count) }
            if case .number(let count)? = state["count"] { return Int(count) }
            return nil
        }

        @Test func aKilledWorkersKeysAnswerFromTheOtherThenGoHomeWithTheirState() async throws {
            // Kept down long past the grace, then restarted by its supervisor.
            let topology = try Self.pool(supervision: #"{ "backoff": { "initialMs": 8000, "maxMs": 8000 } }"#)
            defer { PostgresServer.drop(topology.name) }
            try await withCluster(topology) { cluster in
                var acknowledged = try await Self.fill(cluster)
                let lostKeys = try Self.keys(of: "pool-1", in: topology)
                let watcher = try await cluster.watch()
                kill(try await cluster.workerPID("pool-1"), SIGKILL)
                try await watcher.waitFor("pool-1 to be lost") { $0.isWorker("pool-1", "lost") }
                let lost = ContinuousClock.now

                // Within the grace period and a second, each answers from pool-2 with the count
                // acknowledged before the kill.
                var waiting = Set(lostKeys)
                try await waitUntil("\(lostKeys) to answer from pool-2", timeout: .milliseconds(Self.graceMs + 1000)) {
                    for key in waiting.sorted() {
                        let read = try await cluster.fsmSend(["state", key, "--timeout", "0.2"])
                        guard read.status == 0 else { continue }
                        let state = try JSONValue(parsing: Data(read.stdout.utf8))
                        #expect(Self.count(state) == acknowledged[key], "\(key): \(state)")
                        waiting.remove(key)
                    }
                    return waiting.isEmpty
                }
                let answered = ContinuousClock.now - lost
                #expect(watcher.events(where: { $0.isWorker("pool-1", "registered") }).isEmpty, "still down meanwhile")
                let adopted = Self.owners(topology)
                for key in lostKeys { #expect(adopted[key] == "pool-2", "\(key): \(adopted)") }
                // It goes on there: one more event each.
                for key in lostKeys {
                    acknowledged[key]! += 1
                    #expect(try await cluster.send(key, "increment") == json(#"{"count":\#(acknowledged[key]!)}"#))
                }

                // Back: placement is restored, with the adopter's state.
                try await watcher.waitFor("pool-1 to register again", timeout: .seconds(30)) { $0.isWorker("pool-1", "registered") }
                for key in Self.keys {
                    acknowledged[key]! += 1
                    #expect(try await cluster.send(key, "increment") == json(#"{"count":\#(acknowledged[key]!)}"#))
                }
                let home = Self.owners(topology)
                for key in lostKeys { #expect(home[key] == "pool-1", "\(key): \(home)") }
                for key in Self.keys {
                    #expect(Self.count(try await cluster.state(key)) == acknowledged[key], "\(key)")
                }
                #expect(answered <= .milliseconds(Self.graceMs + 1000), "answered \(answered) after the loss")
            }
        }

        @Test func aPausedWorkersCopiesAreDroppedAndTheAdoptersStateHolds() async throws {
            let topology = try Self.pool(external: true)
            defer { PostgresServer.drop(topology.name) }
            try await withCluster(topology) { cluster in
                var acknowledged = try await Self.fill(cluster)
                let lostKeys = try Self.keys(of: "pool-1", in: topology)
                // A poller of pool-1's: its timer fires on the paused copy as soon as it runs again.
                let pollers = (0..<8).map { "poller/p\($0)" }
                for poller in pollers {
                    #expect(try await cluster.send(poller, #"{"startPolling":{"interval":1}}"#).caseName == "polling")
                }
                let polling = Self.owners(topology)
                let poller = try #require(pollers.first { polling[$0] == "pool-1" }, "no poller on pool-1: \(polling)")
                let watcher = try await cluster.watch()
                let paused = try await cluster.workerPID("pool-1")
                kill(paused, SIGSTOP)
                var resumed = false
                defer { if !resumed { kill(paused, SIGCONT) } }
                try await watcher.waitFor("pool-1 to be lost") { $0.isWorker("pool-1", "lost") }

                // Past the grace, its keys run on pool-2 from their committed state.
                for key in lostKeys {
                    acknowledged[key]! += 10
                    let state = try await cluster.send(key, #"{"add":{"_0":10}}"#)
                    #expect(Self.count(state) == acknowledged[key], "\(key): \(state)")
                }
                // A read adopts the poller: pool-2 claims it and polls on.
                #expect(try await cluster.state(poller).caseName == "polling")
                let adopted = Self.owners(topology)
                for key in lostKeys + [poller] { #expect(adopted[key] == "pool-2", "\(key): \(adopted)") }

                // Resumed, the paused copy's overdue poll commits: the fence refuses it, and the
                // worker drops that copy instead of ending.
                kill(paused, SIGCONT)
                resumed = true
                try await waitUntil("pool-1's stale write of \(poller) to be refused", timeout: .seconds(20)) {
                    Self.stderr(of: "pool-1", in: cluster).contains(
                        "instance \(poller) moved to another worker of the pool (the shared store refused this worker's write")
                }
                // It registers again and drops the copies it held of what was adopted.
                try await watcher.waitFor("pool-1 to register again", timeout: .seconds(30)) { $0.isWorker("pool-1", "registered") }
                for key in lostKeys {
                    try await waitUntil("pool-1 to drop \(key)", timeout: .seconds(20)) {
                        Self.stderr(of: "pool-1", in: cluster).contains("instance \(key) moved to another worker of the pool")
                    }
                }
                // Nothing it held was written over the adopter's: the store and every read agree
                // with what was acknowledged, and the keys go home with it.
                for key in Self.keys {
                    #expect(Self.count(try await cluster.state(key)) == acknowledged[key], "\(key)")
                }
                for key in lostKeys {
                    acknowledged[key]! += 1
                    #expect(try await cluster.send(key, "increment") == json(#"{"count":\#(acknowledged[key]!)}"#))
                }
                let home = Self.owners(topology)
                for key in lostKeys { #expect(home[key] == "pool-1", "\(key): \(home)") }
                #expect(try await cluster.workerPID("pool-1") == paused, "the same process, not a restart")
                #expect(!Self.stderr(of: "pool-1", in: cluster).contains("critical"), "pool-1 kept serving")
            }
        }
    }
}
