import Foundation
@testable import GroveCluster
@testable import GroveWorker
import Logging
import NIOPosix
import PostgresNIO
import Testing

/// The PostgreSQL server the store's tests use: `GROVE_TEST_POSTGRES_URL` (e.g.
/// `postgres://grove@127.0.0.1:5432/grove_test`) with the password in the file
/// `GROVE_TEST_POSTGRES_PASSWORD_FILE`. `Scripts/test.sh` installs Debian's `postgresql`,
/// starts it on loopback and sets both; without them the PostgreSQL tests skip, saying so.
/// Each test works in a topology of its own name and drops its rows after.
enum PostgresTestServer {
    static let skipReason: Comment = """
        no PostgreSQL server for the tests: Scripts/test.sh starts one and sets GROVE_TEST_POSTGRES_URL \
        and GROVE_TEST_POSTGRES_PASSWORD_FILE
        """

    static let location: PostgresLocation? = {
        let environment = ProcessInfo.processInfo.environment
        guard let url = environment["GROVE_TEST_POSTGRES_URL"], !url.isEmpty else { return nil }
        return try? PostgresLocation(url: url, passwordFile: environment["GROVE_TEST_POSTGRES_PASSWORD_FILE"])
    }()

    static var isAvailable: Bool { location != nil }

    static func freshTopology() -> String { "test-\(UUID().uuidString.prefix(12).lowercased())" }

    /// Runs `query` on a connection of its own (not the store's), for reading what a store
    /// wrote and for cleaning up.
    static func rows(_ query: PostgresQuery) throws -> [PostgresRow] {
        guard let location else { return [] }
        let configuration = PostgresConnection.Configuration(
            host: location.host, port: location.port, username: location.user, password: location.password,
            database: location.database, tls: .disable)
        let connection = try PostgresConnection.connect(
            on: MultiThreadedEventLoopGroup.singleton.next(), configuration: configuration, id: 9,
            logger: Logger(label: "grove.test.postgres")).wait()
        defer { try? connection.close().wait() }
        return try connection.query(query, logger: Logger(label: "grove.test.postgres")).wait().rows
    }

    /// Deletes every row of `topology`.
    static func drop(_ topology: String) {
        for table in ["grove_machines", "grove_journal", "grove_journal_runs", "grove_dead_letters", "grove_crashes", "grove_workers"] {
            _ = try? rows(PostgresQuery(unsafeSQL: "DELETE FROM \(table) WHERE topology = $1", binds: {
                var binds = PostgresBindings()
                binds.append(topology)
                return binds
            }()))
        }
    }
}
