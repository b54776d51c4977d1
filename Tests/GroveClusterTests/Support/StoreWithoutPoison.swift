@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker

/// A test's store that keeps no dead letters and counts every crash as the first: what a store
/// made for testing something else answers about poison events.
protocol StoreWithoutPoison: MachineStore {}

extension StoreWithoutPoison {
    func deadLetters() throws(StoreError) -> [DeadLetter] { [] }
    func removeDeadLetter(_ id: Int64) throws(StoreError) -> DeadLetter? { nil }
    func countCrash(of address: String, event identity: [UInt8], at time: Int64) throws(StoreError) -> Int { 1 }
    func forgetCrashes(of address: String, event identity: [UInt8]) throws(StoreError) {}
    func crashes() throws(StoreError) -> [CrashCount] { [] }
    /// Nor the answers of idempotency keys: a keyed event it hosted is answered again after a
    /// restart.
    func answers(of address: String) throws(StoreError) -> [AnswerEntry] { [] }
}
