import Foundation
import GroveWire
import Testing

extension EndToEnd {
    /// Issue 37, step 1: durable machines kept in PostgreSQL (`durability.postgres`)
    /// come back after their worker is killed, from the database rather than a file beside the
    /// worker. Needs the server `Scripts/test.sh` starts (GROVE_TEST_POSTGRES_URL); skips,
    /// saying so, without it.
    @Suite(.timeLimit(.minutes(2)), .enabled(if: PostgresServer.url != nil, PostgresServer.skipReason))
    struct PostgresStoreTests {
        /// ``DurabilityTests/counters`` with its store in PostgreSQL, under a topology name of
        /// its own (the rows of one database are told apart by it).
        static func counters() throws -> TopologyFile {
            var topology = DurabilityTests.counters
            topology.name = "pg-\(UUID().uuidString.prefix(8).lowercased())"
            let url = try #require(PostgresServer.url)
            let passwordFile = try #require(PostgresServer.passwordFile)
            topology.durabilitySettings = #"{ "postgres": { "url": "\#(url)", "passwordFile": "\#(passwordFile)" } }"#
            return topology
        }

        @Test func aKilledWorkerComesBackWithItsMachinesFromPostgreSQL() async throws {
            let topology = try Self.counters()
            defer { PostgresServer.drop(topology.name) }
            try await withCluster(topology) { cluster in
                try await DurabilityTests.fill(cluster)
                try await cluster.killAndAwaitRestart("w", timeout: .seconds(20))
                try await DurabilityTests.expectFilled(cluster)
                // Nothing went to a file beside the worker: the records are in the database.
                let files = FileManager.default.enumerator(atPath: cluster.directory.path)?.compactMap { $0 as? String } ?? []
                #expect(!files.contains { $0.hasSuffix(".sqlite") }, "\(files)")
                #expect(PostgresServer.count("grove_machines", topology: topology.name) == 2)
            }
        }

        @Test func aPasswordFileOthersMayReadStopsTheLaunchNamingIt() async throws {
            var topology = try Self.counters()
            let directory = try Cluster.makeDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let open = directory.appendingPathComponent("postgres.password")
            FileManager.default.createFile(atPath: open.path, contents: Data("x\n".utf8), attributes: [.posixPermissions: 0o644])
            let url = try #require(PostgresServer.url)
            topology.durabilitySettings = #"{ "postgres": { "url": "\#(url)", "passwordFile": "postgres.password" } }"#
            let file = try topology.write(in: directory)
            let launch = try await runCommand(Products.launch, [file.path], in: directory)
            #expect(launch.status == 1, "\(launch)")
            #expect(launch.stderr.contains("$.durability.postgres.passwordFile"), "\(launch.stderr)")
            #expect(launch.stderr.contains("chmod 600"), "\(launch.stderr)")
        }
    }
}

/// The PostgreSQL server of `Scripts/test.sh`, read from the environment it sets.
enum PostgresServer {
    static let url = ProcessInfo.processInfo.environment["GROVE_TEST_POSTGRES_URL"].flatMap { $0.isEmpty ? nil : $0 }
    static let passwordFile = ProcessInfo.processInfo.environment["GROVE_TEST_POSTGRES_PASSWORD_FILE"]
    static let skipReason: Comment = """
        no PostgreSQL server for the tests: Scripts/test.sh starts one and sets GROVE_TEST_POSTGRES_URL \
        and GROVE_TEST_POSTGRES_PASSWORD_FILE
        """

    /// Runs `sql` with psql (Debian's postgresql-client, installed with the server) as the
    /// tests' user; nil when it fails.
    static func psql(_ sql: String, _ arguments: [String] = []) -> String? {
        guard let url, let passwordFile, let password = try? String(contentsOfFile: passwordFile, encoding: .utf8) else { return nil }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["psql", url, "-tAq", "-v", "ON_ERROR_STOP=1", "-c", sql] + arguments
        var environment = ProcessInfo.processInfo.environment
        environment["PGPASSWORD"] = password.trimmingCharacters(in: .whitespacesAndNewlines)
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return nil }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { return nil }
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The rows of `table` that belong to `topology`; -1 when psql fails. (The topology name
    /// is a test's own `pg-xxxxxxxx`, safe to quote.)
    static func count(_ table: String, topology: String) -> Int {
        psql("SELECT count(*) FROM \(table) WHERE topology = '\(topology)'").flatMap(Int.init) ?? -1
    }

    /// Deletes the rows of `topology` from every table.
    static func drop(_ topology: String) {
        for table in ["grove_machines", "grove_journal", "grove_journal_runs", "grove_dead_letters", "grove_crashes", "grove_workers"] {
            _ = psql("DELETE FROM \(table) WHERE topology = '\(topology)'")
        }
    }
}
