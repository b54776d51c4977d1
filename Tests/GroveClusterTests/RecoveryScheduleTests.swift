@testable import GroveCluster
@testable import GroveWorker
@_spi(GroveInternal) import GroveWire
import Testing
import ZeroMQ

/// When recovery brings stored instances back, when it pauses, what it says when it is over,
/// and what a turn cut short by on-demand restores leaves for later: the decisions of
/// `Recovery+Schedule.swift` and `ParkedInbound`, with fixed instants (no thread, no clock).
@Suite(.timeLimit(.minutes(2)))
struct RecoveryScheduleTests {
    let t0 = ContinuousClock.now
    let turn = Duration.milliseconds(20)

    /// A recovery with `count` stored ledgers waiting, begun at `t0`; the last comes back first.
    func waiting(_ count: Int) -> Recovery {
        var recovery = Recovery()
        for index in 0..<count {
            let address = "ledger/\(index)"
            recovery.waiting[address] = MachineRecord(address: address, type: "LedgerMachine", snapshot: [])
            recovery.order.append(address)
        }
        recovery.started = t0
        return recovery
    }

    /// The next step at `now`, carried out as the runtime would: a `.restore` brings the
    /// instance back (``WorkerRuntime/restoreIfWaiting(_:)``).
    func step(_ recovery: inout Recovery, now: ContinuousClock.Instant, turn: Duration? = nil) -> Recovery.Step {
        let step = recovery.step(now: now, turn: turn ?? self.turn)
        if case .restore(let address) = step {
            recovery.waiting[address] = nil
            recovery.restored += 1
        }
        return step
    }

    @Test func aChunkBringsInstancesBackUntilItsTimeIsSpentThenPausesAndTheNextBeginsAfresh() {
        var recovery = waiting(4)
        #expect(step(&recovery, now: t0) == .restore("ledger/3"))
        #expect(step(&recovery, now: t0 + .milliseconds(19)) == .restore("ledger/2"))
        #expect(step(&recovery, now: t0 + turn) == .pause, "the chunk's 20 ms are spent")
        // Long after: the next chunk's first always comes back, and its time counts from then.
        let later = t0 + .seconds(5)
        #expect(step(&recovery, now: later) == .restore("ledger/1"))
        #expect(step(&recovery, now: later + .milliseconds(19)) == .restore("ledger/0"))
        #expect(step(&recovery, now: later + .milliseconds(30))
            == .finished(notice: "recovered 4 durable instance(s) from the store in 5.03 seconds"))
        #expect(recovery.started == nil && recovery.restored == 0, "reset once over")
    }

    @Test func aChunkBringsOneBackHoweverSlowAndNeverMoreThanItsSize() {
        var recovery = waiting(Recovery.chunk + 1)
        // The clock stands still: only the count ends the chunk.
        for _ in 0..<Recovery.chunk {
            guard case .restore = step(&recovery, now: t0) else { Issue.record("not a restore"); return }
        }
        #expect(step(&recovery, now: t0) == .pause)
        // A turn of no time at all still brings one back.
        #expect(step(&recovery, now: t0, turn: .zero) == .restore("ledger/0"))
        #expect(step(&recovery, now: t0, turn: .zero) == .finished(notice: "recovered 1001 durable instance(s) from the store in 0.0 seconds"))
    }

    /// Instances asked for by messages before their turn are skipped; once none waits,
    /// recovery is over at once, whatever the chunk, and says how many were asked for.
    @Test func instancesBroughtBackOnDemandAreSkippedAndRecoveryEndsWhenNoneWaits() {
        var recovery = waiting(4)
        recovery.beginTurn(now: t0)
        for address in ["ledger/3", "ledger/1"] {
            recovery.waiting[address] = nil
            recovery.restored += 1
            recovery.restoredOnDemand(now: t0, turn: turn)
        }
        var parked = ParkedInbound()
        parked.messages.append(Inbound(socket: 0, frames: []))
        let cut = recovery.turnEnded(leaving: &parked)
        #expect(cut)
        #expect(step(&recovery, now: t0) == .restore("ledger/2"), "ledger/3 came back on demand")
        #expect(step(&recovery, now: t0) == .restore("ledger/0"))
        #expect(step(&recovery, now: t0 + .milliseconds(1500)) == .finished(notice:
            "recovered 4 durable instance(s) from the store in 1.5 seconds; 2 of them asked for by a message before their turn, "
            + "over 1 turn(s) that left the rest of their messages for the next"))
    }

    @Test func theBeginningNoticeSaysWhatWaitsAndWhatStaysInTheStore() {
        let recovery = waiting(3)
        #expect(recovery.beginningNotice(opened: .milliseconds(20), notPlaced: 0)
            == "bringing back 3 durable instance(s) from the store (opened in 0.02 seconds)")
        #expect(recovery.beginningNotice(opened: .milliseconds(20), notPlaced: 2)
            == "bringing back 3 durable instance(s) from the store (opened in 0.02 seconds); "
            + "2 stored instance(s) of machines not placed here durably are kept, not started")
        #expect(recovery.beginningNotice(opened: .milliseconds(20), notPlaced: 0, resting: ["sessions", "carts"])
            == "bringing back 3 durable instance(s) from the store (opened in 0.02 seconds); "
            + "the idle keyed instances of carts, sessions stay in the store until their next message")
    }

    /// A turn that ends with messages parked was cut; one turn for them is scheduled, after a
    /// pause, however many turns are cut meanwhile; a reconnection that drops them leaves the
    /// scheduled turn nothing to do.
    @Test func aTurnThatLeavesMessagesIsCutAndSchedulesOneTurnForThem() {
        var recovery = waiting(1)
        var parked = ParkedInbound()
        let leftNothing = recovery.turnEnded(leaving: &parked)
        #expect(!leftNothing && recovery.turnsCut == 0, "a turn that left nothing")
        parked.messages.append(Inbound(socket: 0, frames: [[1]]))
        let first = recovery.turnEnded(leaving: &parked)
        #expect(first && parked.resumeScheduled)
        let second = recovery.turnEnded(leaving: &parked)
        #expect(!second, "one scheduled already")
        #expect(recovery.turnsCut == 2)
        let resumes = parked.pauseEnded()
        #expect(resumes && !parked.resumeScheduled)
        let third = recovery.turnEnded(leaving: &parked)
        #expect(third, "the next cut turn schedules one again")
        parked = ParkedInbound()  // a reconnection
        let resumesNothing = parked.pauseEnded()
        #expect(!resumesNothing)
    }

    @Test func theRestOfABatchIsDecidedBeforeTheMessagesThatArrivedAfterIt() throws {
        var parked = ParkedInbound()
        parked.messages.append(Inbound(socket: 0, frames: [[1]]))
        parked.messages.append(Inbound(socket: 0, frames: [[2]]))
        parked.batch = (payload: [9], envelopes: [], next: 3)
        guard case .batch(let payload, _, let first) = parked.next() else { Issue.record("not the batch's rest first"); return }
        #expect(payload == [9] && first == 3)
        guard case .message(let second) = parked.next(), case .message(let third) = parked.next() else {
            Issue.record("not the messages next"); return
        }
        #expect(second.frames == [[1]] && third.frames == [[2]])
        let last = parked.next()
        #expect(last == nil && parked.isEmpty)
    }

    /// Asked after every event of a batch: the clock is read only once the turn brought an
    /// instance back on demand.
    @Test func whetherTheTurnIsOverReadsTheClockOnlyOnceItBroughtOneBack() {
        var recovery = waiting(1)
        recovery.beginTurn(now: t0)
        var reads = 0
        func now(_ instant: ContinuousClock.Instant) -> ContinuousClock.Instant { reads += 1; return instant }
        // Asked outside `#expect`, which would evaluate the argument to show it.
        let untimed = recovery.turnIsOver(now: now(t0 + .seconds(60)))
        #expect(!untimed && reads == 0)
        recovery.restoredOnDemand(now: t0, turn: turn)
        let timed = recovery.turnIsOver(now: now(t0 + turn))
        #expect(timed && reads == 1)
    }

    /// A restored instance's first drain is a change to write only when it handles something.
    @Test(arguments: [
        (0, 0, 0, true),
        (1, 0, 0, false),   // a queued event
        (0, 1, 0, false),   // interrupted io
        (0, 0, 1, false),   // re-issued io (interrupted when no longer derived)
    ])
    func aRestoredInstancesFirstDrainOnlyBootsItWhenItHasNothingToHandle(queued: Int, interrupted: Int, reissued: Int, bootsOnly: Bool) {
        #expect(Recovery.firstDrainOnlyBoots(queuedEvents: queued, interruptedIO: interrupted, reissuedIO: reissued) == bootsOnly)
    }
}
