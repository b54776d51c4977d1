import Foundation
@testable import GroveCluster
@testable import GroveCoordinator
@_spi(GroveInternal) import GroveWire
import Testing

/// `durability.postgres`: read, refused with exact paths (never echoing a password), and sent
/// to a worker in its welcome as `store` only when a durable machine is placed there.
@Suite("Topology PostgreSQL store", .timeLimit(.minutes(2)))
struct TopologyPostgresTests {
    typealias T = TopologyDurabilityTests

    @Test func theSectionIsReadAndThePasswordFileResolvedBesideTheTopology() throws {
        let topology = try T.load(T.json(#""durability": { "postgres": { "url": "postgres://grove@db:5432/orders", "passwordFile": "secrets/pg.pass" } }"#))
        #expect(topology.durability.postgres == .init(url: "postgres://grove@db:5432/orders", passwordFile: "secrets/pg.pass"))
        #expect(topology.storePasswordFile(besides: URL(fileURLWithPath: "/srv/t"))?.path == "/srv/t/secrets/pg.pass")
        #expect(try T.load(T.json()).durability.postgres == nil)
        #expect(try T.load(T.json()).storeProblems(besides: nil) == [])
    }

    @Test(arguments: [
        (#"{ "url": "postgres://grove:hunter2@db/orders" }"#, "invalid-value $.durability.postgres.url", "passwordFile"),
        (#"{ "passwordFile": "x" }"#, "missing-key $.durability.postgres.url", "needs a url"),
        (#"{ "url": "mysql://grove@db/orders" }"#, "invalid-value $.durability.postgres.url", "not a postgres:// URL"),
        (#"{ "url": "postgres://grove@db/orders", "password": "x" }"#, "unknown-key $.durability.postgres.password", "passwordFile"),
        (#""postgres://grove@db/orders""#, "wrong-type $.durability.postgres", "an object like"),
    ])
    func mistakesAreRefusedAtTheirPaths(section: String, at path: String, says: String) {
        let found = T.issues(T.json(#""durability": { "postgres": \#(section) }"#))
        #expect(found.count == 1 && found[0].hasPrefix(path) && found[0].contains(says), "\(found)")
        #expect(!found.joined().contains("hunter2"), "\(found)")
    }

    @Test func aPasswordFileOthersMayReadIsAProblemBeforeLaunch() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("grove-pg-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        #expect(FileManager.default.createFile(atPath: directory.appendingPathComponent("pg.pass").path, contents: Data("s3cret\n".utf8),
                                               attributes: [.posixPermissions: 0o644]))
        let topology = try T.load(T.json(#""durability": { "postgres": { "url": "postgres://grove@db/orders", "passwordFile": "pg.pass" } }"#))
        let problems = topology.storeProblems(besides: directory)
        #expect(problems.count == 1 && problems[0].hasPrefix("$.durability.postgres.passwordFile:") && problems[0].contains("chmod 600"), "\(problems)")
        #expect(!problems.joined().contains("s3cret"))
    }
}
