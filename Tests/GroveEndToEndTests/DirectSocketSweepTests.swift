import Foundation
@_spi(GroveInternal) import GroveWire
import Testing

extension EndToEnd {
    /// A worker killed with SIGKILL leaves its direct socket file; the process that replaces it
    /// sweeps it at start (docs/DIRECT-ROUTES.md, 1.2), so a worker killed again and again
    /// leaves one file at most: the live one.
    @Suite(.timeLimit(.minutes(2)))
    struct DirectSocketSweepTests {
        static let topology = TopologyFile(
            name: "directsweep", transport: .runtimeDirectory,
            workers: [.init(name: "data", direct: true)],
            machines: [.init(name: "single", type: "Counter", worker: "data")]
        )

        /// The registered worker's direct endpoint, from the coordinator; `nil` while it has none.
        static func endpoint(_ cluster: Cluster) async throws -> String? {
            let location = try await DirectRouteTests.locate("single", at: cluster.clients)
            guard let worker = location.workers.first, worker.state == .registered else { return nil }
            return worker.endpoint
        }

        @Test func aKilledWorkersSocketFileIsSweptByTheNextProcess() async throws {
            try await withCluster(Self.topology) { cluster in
                let directory = TopologyFile.runtimeDirectory(in: cluster.directory) + "/\(Self.topology.name)/direct"
                func files() throws -> [String] { try FileManager.default.contentsOfDirectory(atPath: directory).sorted() }
                var endpoint = try await eventually("data's direct endpoint") { try await Self.endpoint(cluster) }
                #expect(try files() == [(endpoint as NSString).lastPathComponent])

                for round in 1...2 {
                    let pid = try await cluster.workerPID("data")
                    kill(pid, SIGKILL)
                    try await waitUntil("data to run as a new process (kill \(round))", timeout: .seconds(30)) {
                        (try? await cluster.workerPID("data")).map { $0 != pid } ?? false
                    }
                    let previous = endpoint
                    endpoint = try await eventually("data's new direct endpoint (kill \(round))") { () async throws -> String? in
                        try await Self.endpoint(cluster).flatMap { $0 == previous ? nil : $0 }
                    }
                    // The new process bound after its sweep: only its own file is there.
                    #expect(try files() == [(endpoint as NSString).lastPathComponent], "after kill \(round)")
                    let reply = try await DirectRouteTests.request(DirectRouteTests.event("single", UInt64(round)), at: endpoint)
                    #expect(reply.header.kind == .state, "the live file is the one served: \(reply.error?.message ?? "")")
                }
            }
        }
    }
}
