import Grove
@testable import GroveCluster
import GroveRuntime
@testable import GroveWorker
@_spi(GroveInternal) import GroveWire
import Testing

/// Which idle keyed instances leave memory and when those with timers come back: the decisions
/// of `Passivation.swift`, with fixed instants (no socket, no thread, no clock).
@Suite(.timeLimit(.minutes(2)))
struct PassivationTests {
    let t0 = ContinuousClock.now
    let wall = Timestamp(sinceEpoch: .seconds(1_700_000_000))

    static let counters = Welcome.HostedMachine(name: "counters", type: "Counter", keyed: true, durability: .state, passivateAfterMs: 1000)
    static let slow = Welcome.HostedMachine(name: "slow", type: "Counter", keyed: true, durability: .journal, passivateAfterMs: 4000)
    static let staying = Welcome.HostedMachine(name: "staying", type: "Counter", keyed: true, durability: .state)

    /// Passivation after a welcome of the three at `t0`.
    func adopted() -> Passivation {
        var passivation = Passivation()
        passivation.adopt([Self.counters, Self.slow, Self.staying], now: t0)
        return passivation
    }

    /// Runs sweeps until the one numbered `number` has begun.
    func sweep(_ passivation: inout Passivation, to number: Int) {
        var now = t0
        while passivation.sweep < number {
            now += .milliseconds(500)
            _ = passivation.sweepBegins(now: now)
        }
    }

    @Test func sweepsRunEveryHalfOfTheShortestTimeoutAndNotBefore() {
        var passivation = adopted()
        #expect(passivation.period == .milliseconds(500))
        let began1 = passivation.sweepBegins(now: t0 + .milliseconds(499))
        #expect(!began1)
        let began2 = passivation.sweepBegins(now: t0 + .milliseconds(500))
        #expect(began2)
        #expect(passivation.sweep == 1)
        let began3 = passivation.sweepBegins(now: t0 + .milliseconds(999))
        #expect(!began3)
        let began4 = passivation.sweepBegins(now: t0 + .milliseconds(1000))
        #expect(began4)
    }

    @Test func noPassivatingMachineMeansNoSweepAndMachinesWithoutTheSettingStay() {
        var passivation = Passivation()
        passivation.adopt([Self.staying], now: t0)
        #expect(passivation.period == nil)
        let began5 = passivation.sweepBegins(now: t0 + .seconds(3600))
        #expect(!began5)
        var adopted = adopted()
        sweep(&adopted, to: 100)
        #expect(!adopted.passivates("staying"))
        #expect(adopted.verdict(machine: "staying", touched: 0, resting: .idle(earliestTimer: nil), durable: true) == .stay)
    }

    @Test func anInstanceLeavesOnlyOnceIdleForTheWholeTimeout() {
        var passivation = adopted()
        // Touched during sweep 1 (between 500 and 1000 ms): at sweep 3 (1500 ms) it may have been
        // touched 999 ms ago, at sweep 4 it was idle at least 1000 ms.
        sweep(&passivation, to: 3)
        #expect(passivation.verdict(machine: "counters", touched: 1, resting: .idle(earliestTimer: nil), durable: true) == .stay)
        sweep(&passivation, to: 4)
        #expect(passivation.verdict(machine: "counters", touched: 1, resting: .idle(earliestTimer: nil), durable: true)
                == .passivate(wakeAt: nil))
        // The slower machine's 4 s take 9 sweeps of 500 ms.
        sweep(&passivation, to: 9)
        #expect(passivation.verdict(machine: "slow", touched: 1, resting: .idle(earliestTimer: nil), durable: true) == .stay)
        sweep(&passivation, to: 10)
        #expect(passivation.verdict(machine: "slow", touched: 1, resting: .idle(earliestTimer: nil), durable: true) == .passivate(wakeAt: nil))
    }

    /// What a resting table drops by (`idleThrough`) is what judges a host, and a slot worked
    /// out before is where `queue` puts the same instance.
    @Test func theRestingThresholdAndSlotAgreeWithTheHostsJudgement() {
        var passivation = adopted()
        sweep(&passivation, to: 12)
        let judging = passivation.judging
        for machine in ["counters", "slow", "staying"] {
            let through = judging.idleThrough(machine: machine)
            #expect((through == nil) == (machine == "staying"))
            for touched in 0 ... 12 {
                #expect(judging.idleLongEnough(machine: machine, touched: touched) == (through.map { touched <= $0 } ?? false),
                        "\(machine) touched at \(touched)")
                var copy = passivation
                #expect(copy.slot(machine: machine, touched: touched) == copy.queue("\(machine)/k", machine: machine, touched: touched))
            }
        }
    }

    @Test func theHostIsAskedWhetherItRestsOnlyOnceItWasIdleLongEnough() {
        var passivation = adopted()
        sweep(&passivation, to: 3)
        var asked = 0
        func resting() -> Resting {
            asked += 1
            return .idle(earliestTimer: nil)
        }
        #expect(passivation.verdict(machine: "counters", touched: 1, resting: resting(), durable: true) == .stay)
        #expect(passivation.verdict(machine: "staying", touched: 0, resting: resting(), durable: true) == .stay)
        #expect(asked == 0)
        sweep(&passivation, to: 4)
        #expect(passivation.verdict(machine: "counters", touched: 1, resting: resting(), durable: true) == .passivate(wakeAt: nil))
        #expect(asked == 1)
    }

    @Test func aBusyInstanceStaysHoweverLongAgoItWasTouched() {
        var passivation = adopted()
        sweep(&passivation, to: 50)
        #expect(passivation.verdict(machine: "counters", touched: 0, resting: .busy, durable: true) == .stay)
    }

    @Test func aDurableInstanceLeavesWithItsTimerANonDurableOneOnlyWithout() {
        var passivation = adopted()
        sweep(&passivation, to: 10)
        let due = wall + .seconds(30)
        #expect(passivation.verdict(machine: "counters", touched: 0, resting: .idle(earliestTimer: due), durable: true) == .passivate(wakeAt: due))
        #expect(passivation.verdict(machine: "counters", touched: 0, resting: .idle(earliestTimer: nil), durable: false) == .drop)
        #expect(passivation.verdict(machine: "counters", touched: 0, resting: .idle(earliestTimer: due), durable: false) == .stay)
    }

    @Test func passivatedTimersWakeInDeadlineOrderEachOnce() {
        var passivation = adopted()
        passivation.passivated("counters/late", wakeAt: wall + .seconds(20))
        passivation.passivated("counters/early", wakeAt: wall + .seconds(10))
        passivation.passivated("counters/none", wakeAt: nil)
        #expect(passivation.waitingForTimers == 2)
        #expect(passivation.earliestWake == wall + .seconds(10))
        #expect(passivation.due(now: wall + .seconds(9)) == [])
        #expect(passivation.due(now: wall + .seconds(10)) == ["counters/early"])
        #expect(passivation.due(now: wall + .seconds(10)) == [])
        #expect(passivation.due(now: wall + .seconds(60)) == ["counters/late"])
        #expect(passivation.waitingForTimers == 0 && passivation.earliestWake == nil)
    }

    @Test func anInstanceBroughtBackByAMessageIsNotWokenAgain() {
        var passivation = adopted()
        passivation.passivated("counters/a", wakeAt: wall + .seconds(10))
        passivation.cameBack("counters/a")
        #expect(passivation.waitingForTimers == 0)
        #expect(passivation.due(now: wall + .seconds(10)) == [])
        // Passivated again with a later timer: woken for that one only.
        passivation.passivated("counters/a", wakeAt: wall + .seconds(5))
        passivation.cameBack("counters/a")
        passivation.passivated("counters/a", wakeAt: wall + .seconds(30))
        #expect(passivation.due(now: wall + .seconds(29)) == [])
        #expect(passivation.due(now: wall + .seconds(30)) == ["counters/a"])
    }

    @Test func staleWakesDoNotPileUp() {
        var passivation = adopted()
        for round in 0..<1000 {
            passivation.passivated("counters/a", wakeAt: wall + .seconds(Int64(round + 1)))
            passivation.cameBack("counters/a")
        }
        #expect(passivation.waitingForTimers == 0)
        #expect(passivation.earliestWake == nil || passivation.due(now: wall + .seconds(2000)) == [])
    }

    @Test func theLogLineComesFirstAtOnceThenSummedEveryFiveSeconds() {
        var tally = Passivation.Tally()
        #expect(Passivation.line(&tally, written: 0, dropped: 0, live: 3, waiting: 0, now: t0) == nil)
        #expect(Passivation.line(&tally, written: 2, dropped: 1, live: 3, waiting: 1, now: t0)
                == "passivated 3 idle instance(s): 2 written to the store, 1 not durable dropped; 3 in memory, 1 passivated waiting for a timer")
        #expect(Passivation.line(&tally, written: 4, dropped: 0, live: 0, waiting: 0, now: t0 + .seconds(1)) == nil)
        #expect(Passivation.line(&tally, written: 1, dropped: 0, live: 0, waiting: 0, now: t0 + .seconds(5))?
            .hasPrefix("passivated 5 idle instance(s): 5 written") == true)
    }
}

/// A sweep walks the live instances a bounded part per tick, resuming where it stopped.
@Suite(.timeLimit(.minutes(2)))
struct PassivationWalkTests {
    let t0 = ContinuousClock.now

    func adopted() -> Passivation {
        var passivation = Passivation()
        passivation.adopt([PassivationTests.counters], now: t0)
        return passivation
    }

    @Test func aSweepJudgesAtMostSoManyPerTickAndResumesWhereItStopped() {
        var passivation = adopted()
        let live = ["counters/a", "counters/b", "counters/c", "counters/d", "counters/e"]
        #expect(passivation.toJudge(now: t0 + .milliseconds(499), live: live, perTick: 2) == [])
        // The sweep begins with the instances live then; later ticks do not read them again.
        var judged = passivation.toJudge(now: t0 + .milliseconds(500), live: live, perTick: 2)
        #expect(judged.count == 2)
        var now = t0 + .milliseconds(1100)
        var ticks = 1
        repeat {
            let part = passivation.toJudge(now: now, live: ["counters/late"], perTick: 2)
            #expect(part.count <= 2)
            judged += part
            ticks += 1
            // The sweep under way keeps its number while it walks, however long that takes.
            #expect(passivation.sweep == 1)
            now += .milliseconds(600)
        } while !passivation.walk.isEmpty
        #expect(ticks == 3)
        #expect(judged.sorted() == live)
        // The next begins at the next tick it is due, with the instances queued for it, not
        // every live one.
        _ = passivation.queue("counters/queued", machine: "counters", touched: 0)
        #expect(passivation.walkIsFull)
        #expect(passivation.toJudge(now: now, live: ["counters/late"], perTick: 2) == [])
        #expect(passivation.sweep == 2)
        #expect(!passivation.walkIsFull)
        now += .milliseconds(500)
        #expect(passivation.toJudge(now: now, live: ["counters/late"], perTick: 2) == ["counters/queued"])
        #expect(passivation.sweep == 3)
    }

    @Test func anInstanceIsQueuedForTheFirstSweepItMayBeIdleLongEnoughAndNoSooner() {
        var passivation = Passivation()
        passivation.adopt([PassivationTests.counters, PassivationTests.slow, PassivationTests.staying], now: t0)
        let live = ["counters/a", "slow/a", "staying/a"]
        // The first sweep after a welcome walks every live instance.
        var now = t0 + .milliseconds(500)
        #expect(passivation.toJudge(now: now, live: live).sorted() == live)
        #expect(passivation.walkIsFull)
        // counters: 1,000 ms, sweeps every 500 ms: untouched for two sweeps after the one it
        // was reached in. slow: 4,000 ms, eight. staying does not passivate.
        #expect(passivation.queue("counters/a", machine: "counters", touched: 0) == 3)
        #expect(passivation.queue("slow/a", machine: "slow", touched: 0) == 9)
        #expect(passivation.queue("staying/a", machine: "staying", touched: 0) == nil)
        #expect(passivation.queuedCount == 2)
        var judgedAt: [String: Int] = [:]
        while passivation.sweep < 9 {
            now += .milliseconds(500)
            for address in passivation.toJudge(now: now, live: live) {
                judgedAt[address] = passivation.sweep
                // Judged first where it may leave, not before.
                #expect(passivation.judging.idleLongEnough(machine: MachineAddress.machine(of: address), touched: 0))
            }
        }
        #expect(judgedAt == ["counters/a": 3, "slow/a": 9])
        #expect(passivation.queuedCount == 0)
        // Never for the sweep under way or one before: one that holds work is judged at the next.
        #expect(passivation.queue("counters/b", machine: "counters", touched: 9) == 12)
        #expect(passivation.queue("counters/busy", machine: "counters", touched: 0) == 10)
        // A welcome makes the next sweep walk everything again.
        passivation.adopt([PassivationTests.counters], now: now)
        #expect(passivation.rescan)
    }

    @Test func eachQueuedInstanceIsJudgedAtItsSweepHoweverManySweepsWentBefore() {
        var passivation = Passivation()
        passivation.adopt([PassivationTests.counters, PassivationTests.slow], now: t0)
        var now = t0 + .milliseconds(500)
        #expect(passivation.toJudge(now: now, live: []) == [])
        var queuedFor: [String: Int] = [:]
        var judgedAt: [String: Int] = [:]
        // Queued at each of 30 sweeps, more than the longest wait (slow's, eight sweeps) three
        // times over, then sweeps until all are due.
        while passivation.sweep < 40 {
            if passivation.sweep <= 30 {
                for machine in ["counters", "slow"] {
                    let address = "\(machine)/\(passivation.sweep)"
                    queuedFor[address] = passivation.queue(address, machine: machine, touched: passivation.sweep)
                }
            }
            now += .milliseconds(500)
            for address in passivation.toJudge(now: now, live: []) {
                #expect(judgedAt[address] == nil)
                judgedAt[address] = passivation.sweep
            }
        }
        #expect(queuedFor["counters/5"] == 8)
        #expect(queuedFor["slow/5"] == 14)
        #expect(judgedAt.count == 60)
        #expect(judgedAt == queuedFor)
        #expect(passivation.queuedCount == 0)
    }

    @Test func aWelcomeWithNothingThatPassivatesQueuesNothing() {
        var passivation = adopted()
        #expect(passivation.queue("counters/a", machine: "counters", touched: 0) == 3)
        passivation.adopt([PassivationTests.staying], now: t0)
        #expect(passivation.queue("counters/b", machine: "counters", touched: 0) == nil)
        #expect(passivation.queuedCount == 0)
    }

    @Test func noSweepBeginsBeforeItIsDueAndAnEmptyOneEndsAtOnce() {
        var passivation = adopted()
        #expect(passivation.toJudge(now: t0 + .milliseconds(500), live: [], perTick: 2) == [])
        #expect(passivation.sweep == 1)
        #expect(passivation.toJudge(now: t0 + .milliseconds(600), live: ["counters/a"], perTick: 2) == [])
        #expect(passivation.sweep == 1)
        // Past the first sweep after a welcome, what is queued for it, not what lives.
        #expect(passivation.toJudge(now: t0 + .milliseconds(1000), live: ["counters/a"], perTick: 2) == [])
        #expect(passivation.sweep == 2)
        #expect(passivation.queue("counters/a", machine: "counters", touched: 2) == 5)
        #expect(passivation.toJudge(now: t0 + .milliseconds(1500), live: [], perTick: 2) == [])
        #expect(passivation.toJudge(now: t0 + .milliseconds(2000), live: [], perTick: 2) == [])
        #expect(passivation.toJudge(now: t0 + .milliseconds(2500), live: [], perTick: 2) == ["counters/a"])
        #expect(passivation.sweep == 5)
        var none = Passivation()
        none.adopt([PassivationTests.staying], now: t0)
        #expect(none.toJudge(now: t0 + .seconds(3600), live: ["staying/a"]) == [])
    }
}
