import Foundation
import Testing

extension EndToEnd {
    /// `fsm-launch --check` says which groups serve direct routes, and how to turn them on when
    /// none does (the GUIDE's "Direct routes").
    @Suite(.timeLimit(.minutes(2)))
    struct DirectCheckTests {
        @Test func checkNamesTheGroupsThatServeDirectRoutes() async throws {
            let directory = try Cluster.makeDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let some = try TopologyFile(
                name: "check-direct", transport: .ipc,
                workers: [.init(name: "data", count: 2, direct: true), .init(name: "edge")],
                machines: [.init(name: "counter", type: "Counter", worker: "data", keyed: true)]
            ).write(in: directory)
            let check = try await runCommand(Products.launch, ["--check", some.path], in: directory)
            #expect(check.status == 0, "\(check)")
            #expect(check.stdout.split(separator: "\n").contains(
                "direct routes: data (fsm-send and fsm-load --route direct reach their machines without the coordinator); "
                    + "through the coordinator only: edge"), "\(check)")

            let plain = try Cluster.makeDirectory()
            defer { try? FileManager.default.removeItem(at: plain) }
            let without = try TopologyFile(
                name: "check-plain", transport: .ipc, workers: [.init(name: "data", count: 2)],
                machines: [.init(name: "counter", type: "Counter", worker: "data", keyed: true)]
            ).write(in: plain)
            let none = try await runCommand(Products.launch, ["--check", without.path], in: plain)
            #expect(none.status == 0, "\(none)")
            #expect(none.stdout.contains("direct routes: none (every request goes through the coordinator; set workers[].direct"), "\(none)")
        }
    }
}
