import Foundation
import GRDB
@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
import Testing

/// What recovery at start leaves in the store (issue 37): a passivating machine's keyed
/// instances that hold only their state, on every store, and on an SQLite file of before.
@Suite(.timeLimit(.minutes(2))) struct RestingRecordsTests {
    typealias F = StoreFixtures

    /// A record holding only its state (the state-alone codec byte 3), or more (byte 1).
    static func record(_ address: String, rests: Bool, type: String = "Counter") -> MachineRecord {
        MachineRecord(address: address, type: type, snapshot: [rests ? 3 : 1] + Array(address.utf8))
    }

    static let stored: [MachineRecord] = [
        record("counters/idle", rests: true),
        record("counters/timer", rests: false),
        record("counters/\u{e9}t\u{e9}", rests: true),
        record("counters", rests: true),
        record("counters2/idle", rests: true),
        record("counter/idle", rests: true),
        record("counters.x/idle", rests: true),
        record("auth", rests: false, type: "AuthFlow"),
        record("zeta/idle", rests: true),
        MachineRecord(address: "counters/empty", type: "Counter", snapshot: []),
    ]

    @Test(arguments: StoreKind.allCases) func onlyThePassivatingMachinesKeyedInstancesHoldingOnlyStateStay(kind: StoreKind) throws {
        let (store, cleanup) = try kind.make()
        defer { cleanup() }
        try store.commit(F.commit(records: Self.stored))

        let toRun = try store.records(leavingResting: ["counters", "zeta"]).map(\.address)
        #expect(toRun == ["auth", "counter/idle", "counters", "counters.x/idle", "counters/empty", "counters/timer", "counters2/idle"])
        #expect(try store.records(leavingResting: []) == store.records())
        // A record rewritten holding more comes back at start; one rewritten holding less stays.
        try store.commit(F.commit(records: [Self.record("counters/idle", rests: false), Self.record("counters/timer", rests: true)]))
        #expect(try store.records(leavingResting: ["counters"]).map(\.address).filter { $0.hasPrefix("counters/") }
                == ["counters/empty", "counters/idle"])
    }

    @Test(arguments: StoreKind.allCases) func keyedInstancesListsOneMachinesAddressesAndTypesOnly(kind: StoreKind) throws {
        let (store, cleanup) = try kind.make()
        defer { cleanup() }
        try store.commit(F.commit(records: Self.stored))
        #expect(try store.keyedInstances(of: "counters").map(\.address)
                == ["counters/empty", "counters/idle", "counters/timer", "counters/\u{e9}t\u{e9}"])
        #expect(try store.keyedInstances(of: "zeta") == [StoredInstance(address: "zeta/idle", type: "Counter")])
        #expect(try store.keyedInstances(of: "auth") == [])
        #expect(try store.keyedInstances(of: "none") == [])
    }

    @Test func theGapsAroundKeyedRangesCoverEveryOtherAddressOnce() {
        let resting: Set<String> = ["b", "a"]
        let gaps = KeyedRange.gaps(around: resting)
        #expect(gaps.count == 3)
        #expect(gaps[0].from == nil && gaps[0].to == "a/")
        #expect(gaps[1].from == "a0" && gaps[1].to == "b/")
        #expect(gaps[2].from == "b0" && gaps[2].to == nil)
        for address in ["a", "a.x/1", "a/", "a/1/2", "a0", "ab/1", "b/1", "c/1", ""] {
            let inRange = resting.contains { KeyedRange($0).contains(address) }
            let inGaps = gaps.filter { gap in
                gap.from.map { !address.utf8.lexicographicallyPrecedes($0.utf8) } ?? true
                    && gap.to.map { address.utf8.lexicographicallyPrecedes($0.utf8) } ?? true
            }.count
            #expect(inGaps == (inRange ? 0 : 1), "\(address)")
            #expect(inRange == (MachineAddress.hasKey(address) && resting.contains(MachineAddress.machine(of: address))), "\(address)")
        }
    }

    @Test func anSQLiteFileOfBeforeGetsTheIndexAndLeavesTheSameRecords() throws {
        let directory = try F.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let first = try SQLiteMachineStore.open(directory: directory.path, worker: "main")
        let path = first.path
        try first.commit(F.commit(records: Self.stored))
        first.close()
        // As a Grove of before left it: no v5, no index.
        let old = try DatabaseQueue(path: path)
        try old.write { db in
            try db.execute(sql: "DROP INDEX machines_to_run; DELETE FROM grdb_migrations WHERE identifier = 'v5'")
        }
        try old.close()

        let store = try SQLiteMachineStore.open(directory: directory.path, worker: "main")
        defer { store.close() }
        #expect(try store.records(leavingResting: ["counters", "zeta"]).count == 7)
        var configuration = Configuration()
        configuration.readonly = true
        let reader = try DatabaseQueue(path: path, configuration: configuration)
        let plan = try reader.read { db in
            try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + SQLiteMachineStore.SQL.records(outside: 3),
                             arguments: ["", "a/", "a0", "b/", "b0", "c"]).map { row -> String in row["detail"] }
        }
        #expect(plan.contains { $0.contains("machines_to_run") }, "\(plan)")
    }
}
