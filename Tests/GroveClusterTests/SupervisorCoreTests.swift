import Foundation
@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
import Testing

private let t0 = ContinuousClock.now

private func topology(_ supervision: Topology.Supervision, count: Int = 1, external: Topology.WorkerGroup? = nil) -> Topology {
    var workers = [Topology.WorkerGroup(name: "edge", count: count, supervision: supervision)]
    if let external { workers.append(external) }
    return Topology(
        name: "t", coordinator: .init(clients: "ipc:///run/t/c", workers: "ipc:///run/t/w", events: "ipc:///run/t/e"),
        workers: workers, machines: [])
}

/// A core whose workers have all been started (pids 100, 101, ...) and registered.
private func running(_ supervision: Topology.Supervision = .init(), count: Int = 1) -> SupervisorCore {
    var core = SupervisorCore(topology: topology(supervision, count: count))
    for (index, action) in core.startAll().enumerated() {
        guard case .start(let worker) = action else { continue }
        core.started(worker, pid: 100 + Int32(index), now: t0)
    }
    core.becameReady()
    return core
}

/// The restart the actions schedule: when, and for whom; `nil` when there is none.
private func wake(in actions: [SupervisorAction]) -> (worker: String, at: ContinuousClock.Instant)? {
    for action in actions { if case .wake(let worker, let at) = action { return (worker, at) } }
    return nil
}

private func escalation(in actions: [SupervisorAction]) -> String? {
    for action in actions { if case .escalate(let reason) = action { return reason } }
    return nil
}

@Suite("Supervisor core", .timeLimit(.minutes(2)))
struct SupervisorCoreTests {
    @Test func startsEveryInstanceButExternalOnes() {
        var core = SupervisorCore(topology: topology(.init(), count: 2, external: .init(name: "far", external: true)))
        #expect(core.startAll() == [.start(worker: "edge-1"), .start(worker: "edge-2")])
        #expect(core.children["far"] == nil)
    }

    @Test func restartsAfterTheInitialBackoffThenDoublesUpToTheMax() {
        let policy = Topology.Supervision(intensity: 100, backoff: .init(initialMs: 100, maxMs: 500, resetAfterMs: 10_000))
        var core = running(policy)
        var now = t0
        var waits: [Duration] = []
        for pid in Int32(100)..<106 {
            now += .milliseconds(10)
            let actions = core.exited("edge", pid: pid, .signal(9), now: now)
            let scheduled = try! #require(wake(in: actions))
            #expect(scheduled.worker == "edge")
            waits.append(scheduled.at - now)
            #expect(core.due("edge", now: scheduled.at - .milliseconds(1)) == [], "not before its backoff ends")
            #expect(core.due("edge", now: scheduled.at) == [.start(worker: "edge")])
            now = scheduled.at
            core.started("edge", pid: pid + 1, now: now)
        }
        #expect(waits == [100, 200, 400, 500, 500, 500].map(Duration.milliseconds))
    }

    @Test func theBackoffStartsOverAfterAStableRun() {
        let policy = Topology.Supervision(intensity: 100, backoff: .init(initialMs: 100, maxMs: 5000, resetAfterMs: 1000))
        var core = running(policy)
        var now = t0
        for pid in Int32(100)..<104 {
            now += .milliseconds(10)
            let scheduled = try! #require(wake(in: core.exited("edge", pid: pid, .signal(9), now: now)))
            now = scheduled.at
            _ = core.due("edge", now: now)
            core.started("edge", pid: pid + 1, now: now)
        }
        // Ran 999 ms: still in a row (the fifth restart waits 1.6 s).
        var scheduled = try! #require(wake(in: core.exited("edge", pid: 104, .signal(9), now: now + .milliseconds(999))))
        #expect(scheduled.at - (now + .milliseconds(999)) == .milliseconds(1600))
        now = scheduled.at
        _ = core.due("edge", now: now)
        core.started("edge", pid: 105, now: now)
        // Ran the reset period: back to the initial wait.
        now += .milliseconds(1000)
        scheduled = try! #require(wake(in: core.exited("edge", pid: 105, .signal(9), now: now)))
        #expect(scheduled.at - now == .milliseconds(100))
    }

    @Test func aZeroBackoffRestartsAtOnce() {
        var core = running(.init(backoff: .init(initialMs: 0, maxMs: 0)))
        let actions = core.exited("edge", pid: 100, .status(1), now: t0)
        #expect(actions.last == .start(worker: "edge"))
        #expect(wake(in: actions) == nil)
    }

    @Test func moreExitsThanTheIntensityWithinThePeriodEscalate() {
        var core = running(.init(intensity: 2, periodMs: 1000, backoff: .init(initialMs: 0, maxMs: 0)), count: 2)
        // Exits of both instances count together, as an OTP supervisor counts its children's.
        #expect(escalation(in: core.exited("edge-1", pid: 100, .status(1), now: t0)) == nil)
        core.started("edge-1", pid: 200, now: t0)
        #expect(escalation(in: core.exited("edge-2", pid: 101, .status(1), now: t0 + .milliseconds(500))) == nil)
        core.started("edge-2", pid: 201, now: t0 + .milliseconds(500))
        let actions = core.exited("edge-1", pid: 200, .status(1), now: t0 + .milliseconds(999))
        let reason = try! #require(escalation(in: actions))
        #expect(reason.contains("group 'edge' had 3 exits within 1000 ms"), "\(reason)")
        #expect(reason.contains("supervision.onGiveUp is \"escalate\""), "\(reason)")
        #expect(!actions.contains(.start(worker: "edge-1")))
    }

    @Test func exitsOutsideThePeriodAreForgotten() {
        var core = running(.init(intensity: 1, periodMs: 1000, backoff: .init(initialMs: 0, maxMs: 0)))
        #expect(escalation(in: core.exited("edge", pid: 100, .status(1), now: t0)) == nil)
        core.started("edge", pid: 101, now: t0)
        let later = core.exited("edge", pid: 101, .status(1), now: t0 + .milliseconds(1000))
        #expect(escalation(in: later) == nil)
        #expect(later.last == .start(worker: "edge"))
    }

    @Test func stayDownKeepsTheRestRunningAndSaysSoLoudly() {
        var core = running(.init(intensity: 0, onGiveUp: .stayDown))
        let actions = core.exited("edge", pid: 100, .signal(9), now: t0)
        #expect(escalation(in: actions) == nil)
        #expect(actions.first == .report(worker: "edge", pid: 100, .signal(9), blamesEvent: false))
        guard case .log(.error, let message, worker: "edge")? = actions.last else {
            Issue.record("expected an error to be logged, got \(actions)")
            return
        }
        #expect(message.contains("stay-down"))
        #expect(actions.count == 2, "no restart: \(actions)")
        #expect(core.due("edge", now: t0 + .seconds(60)) == [])
    }

    @Test func aFinalExitStatusIsNeverRestarted() {
        var core = running(.init(finalExitCodes: [78], onGiveUp: .stayDown))
        let actions = core.exited("edge", pid: 100, .status(78), now: t0)
        #expect(actions.count == 2)
        guard case .log(.error, let message, _)? = actions.last else {
            Issue.record("expected an error to be logged, got \(actions)")
            return
        }
        #expect(message.contains("final exit status"), "\(message)")
        // A signal with the same number is not an exit status.
        var other = running(.init(finalExitCodes: [9]))
        #expect(wake(in: other.exited("edge", pid: 100, .signal(9), now: t0)) != nil)
    }

    @Test func givingUpBeforeReadyFailsTheLaunchWhateverThePolicy() {
        var core = SupervisorCore(topology: topology(.init(intensity: 0, onGiveUp: .stayDown)))
        _ = core.startAll()
        core.started("edge", pid: 100, now: t0)
        let reason = try! #require(escalation(in: core.exited("edge", pid: 100, .status(1), now: t0)))
        #expect(reason.contains("did not become ready"), "\(reason)")
    }

    @Test func aSilentWorkerIsKilledOnce() {
        var core = running()
        let actions = core.lost("edge", cause: .silent, now: t0)
        #expect(actions.last == .kill(worker: "edge", pid: 100))
        #expect(core.lost("edge", cause: .silent, now: t0) == [], "killed already")
        #expect(core.lost("edge", cause: .unreachable, now: t0) == [], "killed already")
        // Its exit then restarts it, and the new process can be killed in turn.
        #expect(wake(in: core.exited("edge", pid: 100, .signal(9), now: t0)) != nil)
        _ = core.due("edge", now: t0 + .seconds(1))
        core.started("edge", pid: 300, now: t0 + .seconds(1))
        #expect(core.lost("edge", cause: .silent, now: t0 + .seconds(1)).last == .kill(worker: "edge", pid: 300))
    }

    /// A live worker whose connection is gone (the coordinator was stopped a while, and the
    /// worker reconnected) registers again by itself and keeps its machines: it is killed only
    /// if it has not registered again within twice the heartbeat timeout.
    @Test func anUnreachableWorkerHasTwoTimeoutsToRegisterAgain() {
        var core = running()
        let grace = Duration.milliseconds(2 * topology(.init()).heartbeat.timeoutMs)
        let waiting = core.lost("edge", cause: .unreachable, now: t0)
        #expect(waiting.last == .wake(worker: "edge", at: t0 + grace), "\(waiting)")
        #expect(!waiting.contains(.kill(worker: "edge", pid: 100)))
        #expect(core.lost("edge", cause: .unreachable, now: t0 + .milliseconds(10)) == [], "one wait at a time")
        #expect(core.due("edge", now: t0 + grace - .milliseconds(1), registered: false) == [], "not yet")
        #expect(core.due("edge", now: t0 + grace, registered: true) == [], "it registered again: kept")
        // Lost again later and not back in time: killed.
        _ = core.lost("edge", cause: .unreachable, now: t0 + .seconds(60))
        #expect(core.due("edge", now: t0 + .seconds(60) + grace, registered: false).last == .kill(worker: "edge", pid: 100))
        #expect(core.lost("edge", cause: .silent, now: t0 + .seconds(61)) == [], "killed already")
    }

    @Test func aWorkerThatRegisteredAgainOrExitedIsNotKilled() {
        var core = running()
        #expect(core.lost("edge", cause: .registeredAgain, now: t0) == [])
        #expect(core.lost("edge", cause: .exited, now: t0) == [])
        #expect(core.lost("stranger", cause: .silent, now: t0) == [])
        _ = core.exited("edge", pid: 100, .signal(9), now: t0)
        #expect(core.lost("edge", cause: .silent, now: t0) == [], "no process to kill while it waits for its restart")
    }

    /// The coordinator may report the loss of a process that already exited and was restarted
    /// (its dead connection noticed only on the next send): that is not the new process's loss.
    @Test func theLossOfAnEarlierProcessDoesNotKillItsSuccessor() {
        var core = running(.init(backoff: .init(initialMs: 0, maxMs: 0)))
        _ = core.exited("edge", pid: 100, .signal(9), now: t0)
        _ = core.due("edge", now: t0)
        core.started("edge", pid: 300, now: t0)
        #expect(core.lost("edge", pid: 100, cause: .unreachable, now: t0) == [], "pid 100 is gone; 300 was never registered")
        #expect(core.lost("edge", pid: 300, cause: .silent, now: t0).last == .kill(worker: "edge", pid: 300))
    }

    @Test func nothingRestartsOnceStopping() {
        var core = running()
        core.stop()
        #expect(core.exited("edge", pid: 100, .signal(15), now: t0) == [])
        #expect(core.lost("edge", cause: .silent, now: t0) == [])
    }

    @Test func theExitOfAnEarlierProcessIsIgnored() {
        var core = running(.init(backoff: .init(initialMs: 0, maxMs: 0)))
        core.started("edge", pid: 555, now: t0)
        #expect(core.exited("edge", pid: 100, .signal(9), now: t0) == [])
    }

    /// Issue 34, the superseded race: the coordinator hears of a process's exit before its
    /// successor is started (so it retires that process's incarnation and fails what waited on
    /// it first), and hears nothing of an earlier process reaped late, which would otherwise
    /// declare the successor lost.
    @Test func theCoordinatorHearsOfAnExitBeforeTheSuccessorStarts() {
        var core = running(.init(backoff: .init(initialMs: 0, maxMs: 0)))
        let actions = core.exited("edge", pid: 100, .signal(4), now: t0)
        #expect(actions.first == .report(worker: "edge", pid: 100, .signal(4), blamesEvent: true))
        #expect(actions.last == .start(worker: "edge"))
        core.started("edge", pid: 200, now: t0)
        #expect(core.exited("edge", pid: 100, .signal(4), now: t0) == [], "reaped twice, or late: not the running process's exit")
    }

    /// A kill from outside lands in whatever event was running: that event is not to blame. A
    /// trap, an exit status, or our own kill of a worker that hung in an event is.
    @Test func aKillFromOutsideIsNotBlamedOnTheEventItInterrupted() {
        var core = running()
        let killedByOperator = core.exited("edge", pid: 100, .signal(SIGKILL), now: t0)
        #expect(killedByOperator.first == .report(worker: "edge", pid: 100, .signal(SIGKILL), blamesEvent: false))
        #expect(SupervisorCore.blamesEvent(.signal(SIGTERM), killed: false) == false)
        #expect(SupervisorCore.blamesEvent(.signal(SIGILL), killed: false) == true, "a Swift trap on x86_64")
        #expect(SupervisorCore.blamesEvent(.signal(SIGTRAP), killed: false) == true, "a Swift trap on arm64")
        #expect(SupervisorCore.blamesEvent(.status(1), killed: false) == true)

        var hung = running()
        #expect(hung.lost("edge", cause: .silent, now: t0).last == .kill(worker: "edge", pid: 100))
        #expect(hung.exited("edge", pid: 100, .signal(SIGKILL), now: t0).first
            == .report(worker: "edge", pid: 100, .signal(SIGKILL), blamesEvent: true), "killed by us for hanging in an event")
    }

    /// Issue 34, attack 3: exits the coordinator attributes to input it then quarantined or
    /// suspended no longer count toward the intensity; one client's input does not escalate.
    @Test func forgivenExitsDoNotCountTowardTheIntensity() {
        let policy = Topology.Supervision(intensity: 2, periodMs: 10_000, backoff: .init(initialMs: 0, maxMs: 0))
        var core = running(policy)
        var pid: Int32 = 100
        for round in 0..<6 {
            let now = t0 + .milliseconds(100 * round)
            #expect(escalation(in: core.exited("edge", pid: pid, .signal(SIGILL), now: now)) == nil, "round \(round)")
            let forgiven = core.forgive("edge", pid: pid, reason: "its crash was caused by Counter.add, now quarantined")
            guard case .log(.notice, let message, worker: "edge")? = forgiven.first else {
                Issue.record("expected a notice, got \(forgiven)")
                return
            }
            #expect(message.contains("no longer counts toward group 'edge'"), "\(message)")
            #expect(core.forgive("edge", pid: pid, reason: "again") == [], "forgiven once")
            pid += 1
            core.started("edge", pid: pid, now: now)
        }
        // Not forgiven: the third within the period escalates, as before.
        var unforgiving = running(policy)
        pid = 100
        var last: [SupervisorAction] = []
        for round in 0..<3 {
            last = unforgiving.exited("edge", pid: pid, .signal(SIGILL), now: t0 + .milliseconds(100 * round))
            pid += 1
            unforgiving.started("edge", pid: pid, now: t0 + .milliseconds(100 * round))
        }
        #expect(escalation(in: last) != nil)
    }
}
