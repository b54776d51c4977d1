import Foundation
import Testing

extension EndToEnd {
    /// Where durable machines' data goes: `fsm-launch --check` says it, and every worker
    /// fsm-launch starts is told it (`--data-dir`), with nothing created for a topology without
    /// durable machines.
    @Suite(.timeLimit(.minutes(2)))
    struct DataDirectoryTests {
        static func durableTopology(_ durability: String) -> String {
            """
            {
              "name": "orders",
              "workers": [ { "name": "main" } ],
              "machines": [
                { "name": "auth", "type": "AuthFlow", "worker": "main", "durability": "state" },
                { "name": "counter", "type": "Counter", "worker": "main", "keyed": true, "durability": "state" },
                { "name": "loader", "type": "DataLoader", "worker": "main" }
              ],
              "durability": \(durability)
            }
            """
        }

        @Test func checkSaysWhichMachinesAreDurableAndWhereTheirDataGoes() async throws {
            let directory = try Cluster.makeDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let file = directory.appendingPathComponent("orders.json")
            try Data(Self.durableTopology(#"{ "snapshotEvery": 50, "flush": "disk" }"#).utf8).write(to: file)
            let ok = try await runCommand(Products.launch, ["--check", file.path], in: directory)
            #expect(ok.status == 0, "\(ok)")
            let data = directory.appendingPathComponent("grove-data/orders").standardizedFileURL.path
            #expect(ok.stdout.contains("durability: state: auth, counter; data in \(data); flush disk\n"),
                    "\(ok)")
            // Checking creates nothing.
            #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("grove-data").path))

            // A shared store is named by its URL and password file (never the password), not a folder.
            let password = directory.appendingPathComponent("pgpass")
            FileManager.default.createFile(atPath: password.path, contents: Data("not-said\n".utf8), attributes: [.posixPermissions: 0o600])
            try Data(Self.durableTopology(#"""
                { "postgres": { "url": "postgres://grove@127.0.0.1:5432/grove", "passwordFile": "pgpass" }, "handoff": { "graceMs": 2000 } }
                """#).utf8).write(to: file)
            let shared = try await runCommand(Products.launch, ["--check", file.path], in: directory)
            #expect(shared.status == 0, "\(shared)")
            #expect(shared.stdout.contains("durability: state: auth, counter; PostgreSQL at postgres://grove@127.0.0.1:5432/grove, "
                                           + "password in pgpass; flush process; handoff after 2000 ms\n"), "\(shared)")
            #expect(!shared.stdout.contains("not-said") && !shared.stdout.contains("grove-data"), "\(shared)")

            try Data(Self.durableTopology(#"{ "snapshotEvery": 0, "directory": "../elsewhere" }"#).utf8).write(to: file)
            let refused = try await runCommand(Products.launch, ["--check", file.path], in: directory)
            #expect(refused.status == 2, "\(refused)")
            #expect(refused.stderr.contains("$.durability.snapshotEvery: snapshotEvery must be at least 1"), "\(refused)")
        }

        /// Without durable machines the data directory holds only the workers' flight recorders
        /// (issue 34: every machine's events are recorded, so a crash is attributed), no store.
        @Test func everyWorkerIsToldTheDataDirectoryAndNoStoreIsCreatedWithoutDurableMachines() async throws {
            let topology = TopologyFile(
                name: "data-dir", transport: .ipc, workers: [.init(name: "edge"), .init(name: "pool", count: 2)],
                machines: [.init(name: "counter", type: "Counter", worker: "pool", keyed: true)])
            try await withCluster(topology) { cluster in
                let expected = cluster.directory.appendingPathComponent("grove-data/data-dir").standardizedFileURL.path
                for name in ["edge", "pool-1", "pool-2"] {
                    let pid = try await cluster.workerPID(name)
                    let arguments = try Self.commandLine(of: pid)
                    let index = try #require(arguments.firstIndex(of: "--data-dir"), "\(name): \(arguments)")
                    #expect(arguments.dropFirst(index + 1).first == expected, "\(name): \(arguments)")
                }
                #expect(try await cluster.send("counter/a", "increment") == json(#"{"count":1}"#))
                let files = try FileManager.default.contentsOfDirectory(atPath: expected).sorted()
                #expect(files == ["edge.flight", "pool-1.flight", "pool-2.flight"], "\(files)")
            }
        }

        /// A process's arguments, from /proc/<pid>/cmdline.
        static func commandLine(of pid: Int32) throws -> [String] {
            let data = try Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/cmdline"))
            return data.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
        }
    }
}
