import Foundation
@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
import Synchronization
import Testing

/// The gate a worker's replies, state changes and outputs pass on their way to the coordinator:
/// closed until a welcome opens it, closed again when the coordinator gives up on the session.
/// What comes while it is closed is dropped and counted, and the count is told once, when it
/// opens again.
@Suite("OutflowGate", .timeLimit(.minutes(2)))
struct OutflowGateTests {
    @Test func aNewGateHoldsEverythingBackUntilAWelcomeOpensIt() {
        let gate = OutflowGate()
        #expect(!gate.passes() && !gate.passes() && !gate.passes(), "nothing may leave before the coordinator welcomed this worker")
        #expect(gate.open() == 3, "the three dropped are told when it opens")
        #expect(gate.passes() && gate.passes())
    }

    @Test func whatPassesIsNotCountedAsDropped() {
        let gate = OutflowGate()
        #expect(gate.open() == 0)
        for _ in 0 ..< 10 { #expect(gate.passes()) }
        gate.close()
        #expect(!gate.passes())
        #expect(gate.open() == 1, "ten passed, one was dropped")
    }

    @Test func eachOpeningTellsOnlyWhatWasDroppedSinceTheLastOne() {
        let gate = OutflowGate()
        _ = gate.passes()
        #expect(gate.open() == 1)
        #expect(gate.open() == 0, "a second welcome in a row has nothing more to tell")
        gate.close()
        for _ in 0 ..< 5 { _ = gate.passes() }
        gate.close()
        #expect(!gate.passes(), "closing twice keeps it closed")
        #expect(gate.open() == 6)
        gate.close()
        #expect(gate.open() == 0, "closed and opened again with nothing dropped between")
    }

    /// The link calls `passes()` from the worker's hosts while the loop thread opens and closes
    /// the gate: no drop may be lost or counted twice. The threads start together, so their
    /// drops overlap.
    @Test func dropsFromManyThreadsAreAllCounted() throws {
        let gate = OutflowGate()
        // Enough drops for the threads to overlap, few enough that a debug build on two cores
        // is done in well under a second (four spinning threads once held the test pool ~30 s).
        let threads = 4, each = 50_000
        let start = DispatchSemaphore(value: 0), finished = DispatchGroup()
        for _ in 0 ..< threads {
            finished.enter()
            Thread {
                start.wait()
                for _ in 0 ..< each { _ = gate.passes() }
                finished.leave()
            }.start()
        }
        for _ in 0 ..< threads { start.signal() }
        try #require(finished.wait(timeout: .now() + 50) == .success)
        #expect(gate.open() == threads * each)
    }
}
