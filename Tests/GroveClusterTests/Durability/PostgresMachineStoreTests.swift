import Foundation
@testable import GroveCluster
@testable import GroveWorker
import PostgresNIO
import Testing

/// How a PostgreSQL store is named: a URL without the password, the password from a file of
/// the user's own or the environment. No server needed.
@Suite(.timeLimit(.minutes(2))) struct PostgresLocationTests {
    @Test func aURLNamesUserHostPortAndDatabase() throws {
        let location = try PostgresLocation(url: "postgres://grove@db.internal:6432/orders?sslmode=require", environment: [:])
        #expect(location.host == "db.internal")
        #expect(location.port == 6432)
        #expect(location.user == "grove")
        #expect(location.database == "orders")
        #expect(location.requiresTLS)
        #expect(location.password == nil)
        #expect(try PostgresLocation(url: "postgresql://grove@127.0.0.1/grove", environment: [:]).port == 5432)
    }

    @Test func aPasswordInTheURLIsRefusedWithoutRepeatingIt() throws {
        let error = #expect(throws: PostgresLocation.Problem.self) {
            try PostgresLocation(url: "postgres://grove:hunter2@127.0.0.1/grove", environment: [:])
        }
        #expect(error?.message.contains("passwordFile") == true)
        #expect(error?.message.contains("hunter2") == false)
    }

    @Test(arguments: [
        ("mysql://grove@127.0.0.1/grove", "not a postgres:// URL"),
        ("postgres://127.0.0.1/grove", "names no user"),
        ("postgres://grove@127.0.0.1", "names no database"),
        ("postgres://grove@127.0.0.1/grove?sslmode=verify-full", "use disable or require"),
        ("postgres://grove@127.0.0.1/grove?application_name=x", "only sslmode"),
    ])
    func aURLThatIsNotUsableSaysWhatIsWrong(url: String, says: String) {
        let error = #expect(throws: PostgresLocation.Problem.self) { try PostgresLocation(url: url, environment: [:]) }
        #expect(error?.message.contains(says) == true, "\(error?.message ?? "")")
    }

    @Test func thePasswordComesFromItsFileElseFromTheEnvironment() throws {
        let directory = try StoreFixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("pg.pass").path
        #expect(FileManager.default.createFile(atPath: file, contents: Data("s3cret\nignored\n".utf8), attributes: [.posixPermissions: 0o600]))
        let environment = [PostgresLocation.passwordVariable: "from-env"]
        #expect(try PostgresLocation(url: "postgres://grove@127.0.0.1/grove", passwordFile: file, environment: environment).password == "s3cret")
        #expect(try PostgresLocation(url: "postgres://grove@127.0.0.1/grove", environment: environment).password == "from-env")
    }

    @Test func aPasswordFileOthersMayReadIsRefused() throws {
        let directory = try StoreFixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("pg.pass").path
        #expect(FileManager.default.createFile(atPath: file, contents: Data("s3cret\n".utf8), attributes: [.posixPermissions: 0o644]))
        let error = #expect(throws: PostgresLocation.Problem.self) {
            try PostgresLocation(url: "postgres://grove@127.0.0.1/grove", passwordFile: file, environment: [:])
        }
        #expect(error?.permission == true)
        #expect(error?.message.contains("chmod 600") == true)
        #expect(error?.message.contains("s3cret") == false)
    }

    @Test func theDescriptionLeavesThePasswordOut() throws {
        let location = try PostgresLocation(url: "postgres://grove@127.0.0.1/grove", environment: [PostgresLocation.passwordVariable: "s3cret"])
        #expect("\(location)" == "postgres://grove@127.0.0.1:5432/grove")
    }
}

/// What only the PostgreSQL store has: many workers and topologies in one database, each
/// seeing its own rows, and the epoch that fences a worker replaced by a newer process. What
/// every store promises runs against it in `MachineStoreTests`.
@Suite(.timeLimit(.minutes(2)), .enabled(if: PostgresTestServer.isAvailable, PostgresTestServer.skipReason))
struct PostgresMachineStoreTests {
    typealias F = StoreFixtures

    private func open(_ topology: String, _ worker: String) throws -> PostgresMachineStore {
        try PostgresMachineStore(location: #require(PostgresTestServer.location), topology: topology, worker: worker)
    }

    @Test func aSecondProcessOfTheSameWorkerFencesTheFirst() throws {
        let topology = PostgresTestServer.freshTopology()
        defer { PostgresTestServer.drop(topology) }
        let first = try open(topology, "main")
        defer { first.close() }
        try first.commit(F.commit(records: [F.record("counter/a", "1")]))
        let second = try open(topology, "main")
        defer { second.close() }
        #expect(second.epoch == first.epoch + 1)

        let error = #expect(throws: StoreError.self) { try first.commit(F.commit(records: [F.record("counter/a", "2")])) }
        #expect(error?.code == .fenced)
        #expect(error?.message.contains("took over") == true)
        #expect(try second.records() == [F.record("counter/a", "1")])
        try second.commit(F.commit(records: [F.record("counter/a", "3")]))
        #expect(try second.records() == [F.record("counter/a", "3")])
    }

    @Test func workersAndTopologiesSeeOnlyTheirOwnRows() throws {
        let (one, other) = (PostgresTestServer.freshTopology(), PostgresTestServer.freshTopology())
        defer { PostgresTestServer.drop(one); PostgresTestServer.drop(other) }
        let main = try open(one, "main")
        let edge = try open(one, "edge")
        let elsewhere = try open(other, "main")
        defer { main.close(); edge.close(); elsewhere.close() }
        try main.commit(F.commit(records: [F.record("auth", "a")], deadLetters: [F.letter("auth")]))
        try edge.commit(F.commit(records: [F.record("counter/e", "e")]))
        try elsewhere.commit(F.commit(records: [F.record("auth", "other")]))
        _ = try main.countCrash(of: "auth", event: [1, 2], at: 5)

        #expect(try main.records() == [F.record("auth", "a")])
        #expect(try edge.records() == [F.record("counter/e", "e")])
        #expect(try elsewhere.records() == [F.record("auth", "other")])
        #expect(try edge.deadLetters() == [])
        #expect(try edge.crashes() == [])
        #expect(try main.deadLetters().count == 1)
        let id = try #require(try main.deadLetters().first?.id)
        #expect(try edge.removeDeadLetter(id) == nil)
        #expect(try main.deadLetters().count == 1)
    }

    @Test func aMachineAnotherWorkerOwnsIsNotWrittenAndNothingOfTheCommitIs() throws {
        let topology = PostgresTestServer.freshTopology()
        defer { PostgresTestServer.drop(topology) }
        let main = try open(topology, "main")
        let edge = try open(topology, "edge")
        defer { main.close(); edge.close() }
        try edge.commit(F.commit(records: [F.record("counter/x", "edge's")]))
        let error = #expect(throws: StoreError.self) {
            try main.commit(F.commit(records: [F.record("counter/mine", "1"), F.record("counter/x", "main's")]))
        }
        #expect(error?.code == .rejected)
        #expect(error?.message.contains("counter/x (owned by edge)") == true, "\(error?.message ?? "")")
        #expect(try main.records() == [])
        #expect(try edge.records() == [F.record("counter/x", "edge's")])
    }

    @Test func everythingOutlivesCloseAndReopen() throws {
        let topology = PostgresTestServer.freshTopology()
        defer { PostgresTestServer.drop(topology) }
        var store = try open(topology, "main")
        try store.commit(F.commit(
            records: [F.record("counter/a", "3", sequence: 3)], journal: [F.entry("counter/a", 4)],
            deadLetters: [F.letter("counter/a")], flush: .disk))
        // An entry of a machine without a record does not outlive the worker.
        try store.commit(F.commit(journal: [F.entry("counter/orphan", 1)]))
        let letters = try store.deadLetters()
        store.close()

        store = try open(topology, "main")
        defer { store.close() }
        #expect(try store.records() == [F.record("counter/a", "3", sequence: 3)])
        #expect(try store.journal(of: "counter/a", after: 3) == [F.entry("counter/a", 4)])
        #expect(try store.journal(of: "counter/orphan", after: 0) == [])
        #expect(try store.deadLetters() == letters)
    }

    @Test func aClosedStoreSaysSo() throws {
        let topology = PostgresTestServer.freshTopology()
        defer { PostgresTestServer.drop(topology) }
        let store = try open(topology, "main")
        store.close()
        store.close()
        let error = #expect(throws: StoreError.self) { try store.records() }
        #expect(error?.code == .closed)
    }

    @Test func aWrongPasswordIsRefusedWithoutRepeatingIt() throws {
        var location = try #require(PostgresTestServer.location)
        location.password = "not-the-password-7f3a"
        let error = #expect(throws: StoreError.self) {
            try PostgresMachineStore(location: location, topology: PostgresTestServer.freshTopology(), worker: "main")
        }
        #expect(error?.code == .permission, "\(error?.message ?? "")")
        #expect(error?.message.contains("not-the-password-7f3a") == false)
    }

    @Test func aServerThatIsNotThereIsNamedWithWhatToCheck() throws {
        var location = try #require(PostgresTestServer.location)
        location.host = "127.0.0.1"
        location.port = 1  // nothing listens on port 1
        let error = #expect(throws: StoreError.self) {
            try PostgresMachineStore(location: location, topology: PostgresTestServer.freshTopology(), worker: "main")
        }
        #expect(error?.code == .failed)
        #expect(error?.message.contains("127.0.0.1:1") == true, "\(error?.message ?? "")")
        #expect(error?.message.contains("is the server running") == true, "\(error?.message ?? "")")
    }
}
