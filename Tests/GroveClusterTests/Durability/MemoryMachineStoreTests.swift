@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
import Testing

/// What the in-memory twin adds for the tests of its users: failures on demand, and a count.
@Suite(.timeLimit(.minutes(2))) struct MemoryMachineStoreTests {
    typealias F = StoreFixtures

    @Test func anInjectedFailureFailsEveryCommitAndChangesNothing() throws {
        let store = MemoryMachineStore()
        try store.commit(F.commit(records: [F.record("a", "1")]))
        store.failure = StoreError("the disk is full", code: .full)
        #expect(throws: StoreError("", code: .full)) { try store.commit(F.commit(records: [F.record("a", "2")])) }
        #expect(try store.records() == [F.record("a", "1")])
        #expect(store.commits == 1)
        store.failure = nil
        try store.commit(F.commit(records: [F.record("a", "2")]))
        #expect(try store.records() == [F.record("a", "2")] && store.commits == 2)
    }
}
