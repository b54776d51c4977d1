import Foundation
import Testing

extension EndToEnd {
    /// Issue 37's first done-when across hosts: ``HandoffTests``' cases (``HandoffScenario``) on
    /// ``NetworkHostsTests``' spread, the coordinator and each worker of the pool on a host of
    /// their own (network namespaces, tcp with CURVE), the store in PostgreSQL reached through
    /// the hosts' relays, `durability.handoff` set. fsm-launch runs the poller's io worker
    /// (`data-io`) beside the coordinator.
    @Suite(.timeLimit(.minutes(3)),
           .enabled(if: NetworkHosts.isAvailable, NetworkHosts.skipReason),
           .enabled(if: PostgresServer.url != nil, PostgresServer.skipReason),
           .enabled(if: NetworkHosts.postgresRelaySkipReason == nil, NetworkHosts.postgresRelaySkipReason ?? ""))
    struct NetworkHostsHandoffTests {
        static let graceMs = 1000

        /// ``NetworkHostsPostgresTests``' topology with handoff, a fast heartbeat, and the
        /// scenario's poller.
        static func handoff(named name: String) -> (NetworkHosts, inout TopologyFile) async throws -> Void {
            { hosts, topology in
                try await NetworkHostsPostgresTests.postgres(named: name)(hosts, &topology)
                let store = try #require(topology.durabilitySettings?.trimmingCharacters(in: .whitespacesAndNewlines))
                topology.durabilitySettings = String(store.dropLast()) + #", "handoff": { "graceMs": \#(graceMs) } }"#
                topology.heartbeat = (intervalMs: 100, timeoutMs: 1000)
                topology.workers.append(.init(name: "data-io"))
                topology.machines.append(.init(name: "poller", type: "PollingService", worker: "pool", keyed: true, durability: "state"))
                topology.io = [("FetchData", "data-io")]
            }
        }

        @Test func aKilledWorkersKeysAnswerFromAnotherHostThenGoHome() async throws {
            let name = "nho-\(UUID().uuidString.prefix(8).lowercased())"
            defer { PostgresServer.drop(name) }
            try await NetworkHostsTests.withSpread(configure: Self.handoff(named: name)) { spread in
                let scenario = HandoffScenario(pool: spread, topology: name, graceMs: Self.graceMs)
                // Kept down until the scenario has seen its keys answer elsewhere; then started
                // again on its host with the command fsm-launch printed.
                try await scenario.killedWorkersKeysMoveAndGoHome {
                    try await spread.startWorker("pool-1", on: "worker-1")
                }
            }
        }

        @Test func aPausedWorkerOnAnotherHostIsFencedAndRejoins() async throws {
            let name = "nhp-\(UUID().uuidString.prefix(8).lowercased())"
            defer { PostgresServer.drop(name) }
            try await NetworkHostsTests.withSpread(configure: Self.handoff(named: name)) { spread in
                try await HandoffScenario(pool: spread, topology: name, graceMs: Self.graceMs).pausedWorkersCopiesAreDropped()
            }
        }
    }
}

extension EndToEnd.NetworkHostsTests.Spread: HandoffPool {
    /// A pool worker's output is in its host's folder, under its name
    /// (``NetworkHostsTests/Spread/startWorker(_:on:)``).
    func stderr(ofWorker name: String) -> String {
        guard let host = EndToEnd.NetworkHostsTests.placement.first(where: { $0.0 == name })?.1 else { return "" }
        let folder = directory.appendingPathComponent(host)
        let files = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return files.filter { $0.hasPrefix("\(name)-") && $0.hasSuffix(".err") }.sorted().map { file in
            (try? String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)) ?? ""
        }.joined()
    }
}
