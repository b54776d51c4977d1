@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
@_spi(GroveInternal) import GroveWire
import Testing

/// How long a turn of a worker's loop may bring stored instances back on demand, with the
/// clock given: no thread, no clock.
@Suite(.timeLimit(.minutes(2)))
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

    /// Which stored instances come back: a machine placed here durably, of the type stored,
    /// keyed as the address is, not running already. The rest stay in the store.
    @Test func onlyRecordsOfMachinesPlacedHereDurablyComeBack() {
        var ledger = Welcome.HostedMachine(name: "ledger", type: "LedgerMachine", keyed: true)
        ledger.durability = .state
        var auth = Welcome.HostedMachine(name: "auth", type: "AuthFlow", keyed: false)
        auth.durability = .journal
        let cache = Welcome.HostedMachine(name: "cache", type: "Cache", keyed: false)  // not durable
        let placed = ["ledger": ledger, "auth": auth, "cache": cache]
        func record(_ address: String, _ type: String) -> MachineRecord { MachineRecord(address: address, type: type, snapshot: []) }
        let records = [
            record("ledger/a", "LedgerMachine"),
            record("ledger/b", "LedgerMachine"),        // running already
            record("ledger/c", "OldLedger"),            // another type now
            record("ledger", "LedgerMachine"),          // keyed machine, no key
            record("auth", "AuthFlow"),
            record("auth/x", "AuthFlow"),               // a single machine with a key
            record("cache", "Cache"),                   // not durable here
            record("moved/1", "Moved"),                 // placed elsewhere
            record("ledger/\u{301}d", "LedgerMachine"),  // a key behind a combining mark
        ]
        var recovery = Recovery()
        let notPlaced = recovery.queue(records, placed: placed, running: { $0 == "ledger/b" })
        #expect(recovery.order == ["ledger/a", "auth", "ledger/\u{301}d"])
        #expect(Set(recovery.waiting.keys) == Set(recovery.order))
        #expect(notPlaced == 5)
    }

    @Test func aChunkBringsOneBackWhateverTheTimeAndNeverMoreThanItsSize() {
        let ends = t0 + turn
        #expect(Recovery.chunkGoesOn(restored: 0, now: ends + .seconds(5), ends: ends), "the first comes back even after the turn's end")
        #expect(Recovery.chunkGoesOn(restored: 1, now: t0, ends: ends))
        #expect(!Recovery.chunkGoesOn(restored: 1, now: ends, ends: ends))
        #expect(!Recovery.chunkGoesOn(restored: Recovery.chunk, now: t0, ends: ends))
    }
}
