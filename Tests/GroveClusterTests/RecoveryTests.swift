@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
import Testing

/// How long a turn of a worker's loop may bring stored instances back on demand, with the
/// clock given: no thread, no clock.
@Suite(.timeLimit(.minutes(1)))
struct RecoveryTests {
    let t0 = ContinuousClock.now
    let turn = Duration.milliseconds(20)

    func waiting() -> Recovery {
        var recovery = Recovery()
        recovery.waiting["ledger/a"] = MachineRecord(address: "ledger/a", type: "LedgerMachine", snapshot: [])
        return recovery
    }

    @Test func aTurnThatBringsNothingBackNeverRunsOut() {
        var recovery = waiting()
        recovery.beginTurn(now: t0)
        #expect(!recovery.isTimed)
        #expect(!recovery.turnIsOver(now: t0 + .seconds(60)))
    }

    @Test func aTurnRunsOutItsTimeCountedFromItsBeginning() {
        var recovery = waiting()
        recovery.beginTurn(now: t0)
        recovery.restoredOnDemand(now: t0 + .milliseconds(15), turn: turn)
        recovery.restoredOnDemand(now: t0 + .milliseconds(18), turn: turn)
        #expect(recovery.isTimed && recovery.onDemand == 2)
        #expect(!recovery.turnIsOver(now: t0 + .milliseconds(19)))
        #expect(recovery.turnIsOver(now: t0 + turn))
    }

    @Test func theNextTurnStartsAfresh() {
        var recovery = waiting()
        recovery.beginTurn(now: t0)
        recovery.restoredOnDemand(now: t0, turn: turn)
        #expect(recovery.turnIsOver(now: t0 + turn))
        recovery.beginTurn(now: t0 + .seconds(1))
        #expect(!recovery.isTimed && !recovery.turnIsOver(now: t0 + .seconds(2)))
        recovery.restoredOnDemand(now: t0 + .seconds(1) + .milliseconds(5), turn: turn)
        #expect(!recovery.turnIsOver(now: t0 + .seconds(1) + .milliseconds(19)))
        #expect(recovery.turnIsOver(now: t0 + .seconds(1) + turn))
    }

    @Test func withNothingWaitingAtItsBeginningATurnCountsFromItsFirstRestore() {
        var recovery = Recovery()
        recovery.beginTurn(now: t0)
        recovery.restoredOnDemand(now: t0 + .milliseconds(50), turn: turn)
        #expect(!recovery.turnIsOver(now: t0 + .milliseconds(69)))
        #expect(recovery.turnIsOver(now: t0 + .milliseconds(70)))
    }
}
