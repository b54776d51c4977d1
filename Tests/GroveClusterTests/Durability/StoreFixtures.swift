import Foundation
@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
import Testing

/// Which store a shared semantic test runs against: both must behave the same.
enum StoreKind: String, CaseIterable, CustomTestStringConvertible {
    case sqlite
    case memory
    case postgres

    /// PostgreSQL only where a test server was given (``PostgresTestServer``); the suites of
    /// `PostgresMachineStoreTests` say why they skip when it was not.
    static var allCases: [StoreKind] { PostgresTestServer.location == nil ? [.sqlite, .memory] : [.sqlite, .memory, .postgres] }

    var testDescription: String { rawValue }

    /// A fresh, empty store of this kind, and what removes it afterwards.
    func make() throws -> (store: any MachineStore, cleanup: () -> Void) {
        switch self {
        case .memory:
            return (MemoryMachineStore(), {})
        case .sqlite:
            let directory = try StoreFixtures.temporaryDirectory()
            let store = try SQLiteMachineStore.open(directory: directory.path, worker: "main")
            return (store, {
                store.close()
                try? FileManager.default.removeItem(at: directory)
            })
        case .postgres:
            let location = try #require(PostgresTestServer.location)
            let topology = PostgresTestServer.freshTopology()
            let store = try PostgresMachineStore(location: location, topology: topology, worker: "main")
            return (store, {
                store.close()
                PostgresTestServer.drop(topology)
            })
        }
    }
}

enum StoreFixtures {
    /// A new directory under the system's temporary one, mode 0700: a store refuses a data
    /// directory others may enter.
    static func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("grove-store-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        return url
    }

    static func record(_ address: String, _ snapshot: String, sequence: UInt64 = 0, type: String = "Counter") -> MachineRecord {
        MachineRecord(address: address, type: type, snapshot: Array(snapshot.utf8), sequence: sequence)
    }

    static func entry(_ address: String, _ sequence: UInt64, _ event: String = "increment") -> JournalEntry {
        JournalEntry(address: address, sequence: sequence, event: Array(event.utf8), time: 1_700_000_000_000 + Int64(sequence))
    }

    static func letter(_ address: String, error: String = "the worker died (signal 4) twice while running it") -> DeadLetter {
        DeadLetter(address: address, type: "Counter", event: Array(#"{"add":1}"#.utf8), binary: false, error: error,
                   crashes: 2, time: 1_700_000_000_123)
    }

    static func commit(
        records: [MachineRecord] = [], journal: [JournalEntry] = [], truncations: [(String, UInt64)] = [],
        removed: [String] = [], deadLetters: [DeadLetter] = [], flush: StoreFlush = .process
    ) -> StoreCommit {
        var commit = StoreCommit()
        commit.records = records
        commit.journal = journal
        commit.truncations = truncations.map { (address: $0.0, through: $0.1) }
        commit.removed = removed
        commit.deadLetters = deadLetters
        commit.flush = flush
        return commit
    }
}
