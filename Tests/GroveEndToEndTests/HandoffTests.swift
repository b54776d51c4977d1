import Foundation
import GroveWire
import Testing

extension EndToEnd {
    /// Issue 37 item 2: a pool of two workers, a keyed durable machine in PostgreSQL with
    /// `durability.handoff`. A worker lost past the grace period has its keyed instances
    /// answer from the other with their last committed state; when it comes back, placement
    /// is restored; a worker paused past the grace and resumed keeps no live copy of what
    /// was adopted (``HandoffScenario``, which `NetworkHostsHandoffTests` runs across hosts).
    /// Needs the server `Scripts/test.sh` starts (GROVE_TEST_POSTGRES_URL).
    @Suite(.timeLimit(.minutes(3)), .enabled(if: PostgresServer.url != nil, PostgresServer.skipReason))
    struct HandoffTests {
        static let graceMs = 1000

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

        @Test func aKilledWorkersKeysAnswerFromTheOtherThenGoHomeWithTheirState() async throws {
            // Kept down long past the grace, then restarted by its supervisor.
            let topology = try Self.pool(supervision: #"{ "backoff": { "initialMs": 8000, "maxMs": 8000 } }"#)
            defer { PostgresServer.drop(topology.name) }
            try await withCluster(topology) { cluster in
                let scenario = HandoffScenario(pool: cluster, topology: topology.name, graceMs: Self.graceMs)
                try await scenario.killedWorkersKeysMoveAndGoHome(bringBack: {})
            }
        }

        @Test func aPausedWorkersCopiesAreDroppedAndTheAdoptersStateHolds() async throws {
            let topology = try Self.pool(external: true)
            defer { PostgresServer.drop(topology.name) }
            try await withCluster(topology) { cluster in
                try await HandoffScenario(pool: cluster, topology: topology.name, graceMs: Self.graceMs).pausedWorkersCopiesAreDropped()
            }
        }
    }
}
