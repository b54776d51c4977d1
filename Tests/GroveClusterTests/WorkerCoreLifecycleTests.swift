@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
@_spi(GroveInternal) import GroveWire
import Logging
import Testing

/// What the worker does when one of its machines ends, by the machine's `onEnd`, and for an
/// admin's `restart`: decided by the pure core, fed ends, requests and ticks, no sockets.
@Suite(.timeLimit(.minutes(2))) struct WorkerCoreLifecycleTests {
    let session = WorkerCoreTests()
    var start: ContinuousClock.Instant { session.start }

    static let staying = Welcome.HostedMachine(name: "counter", type: "Counter", keyed: false)
    static let restarting = Welcome.HostedMachine(name: "form", type: "Counter", keyed: false, onEnd: .restart)
    static let sessions = Welcome.HostedMachine(name: "session", type: "Counter", keyed: true, onEnd: .remove)
    static let keyedRestarting = Welcome.HostedMachine(name: "loader", type: "DataLoader", keyed: true, onEnd: .restart)

    func welcomed() -> WorkerCore {
        var core = session.core()
        _ = core.welcome(session.welcome(machines: [Self.staying, Self.restarting, Self.sessions, Self.keyedRestarting]), now: start)
        return core
    }

    func ms(_ value: Int) -> Duration { .milliseconds(value) }

    /// The restarts among `actions`.
    func restarts(_ actions: [WorkerAction]) -> [WorkerAction] {
        actions.filter { if case .restartInstance = $0 { true } else { false } }
    }

    @Test func aMachineThatStaysIsLeftEnded() {
        var core = welcomed()
        #expect(core.machineEnded("counter", now: start) == [])
        #expect(restarts(core.tick(now: start + .seconds(60))).isEmpty)
        #expect(core.endings.isEmpty, "nothing is kept for an instance that stays")
    }

    @Test func aRemovedKeyedInstanceFreesItsKey() {
        var core = welcomed()
        #expect(core.machineEnded("session/s-1", now: start) == [.removeInstance("session/s-1")])
        #expect(core.endings.isEmpty)
        // Not placed (any more): nothing is removed.
        #expect(core.machineEnded("gone/1", now: start) == [])
    }

    @Test func aRestartingMachineComesBackAfterTheFirstWait() {
        var core = welcomed()
        let ended = core.machineEnded("form", now: start)
        #expect(session.logs(ended, .info, "restarting it from its initial state in 100 ms"), "\(ended)")
        #expect(restarts(core.tick(now: start + ms(99))).isEmpty, "not before its wait")
        #expect(restarts(core.tick(now: start + ms(100))) == [.restartInstance("form", answering: [])])
        #expect(restarts(core.tick(now: start + ms(200))).isEmpty, "once")
        // A keyed instance comes back the same way, under its own address.
        _ = core.machineEnded("loader/eu", now: start)
        #expect(restarts(core.tick(now: start + ms(100))) == [.restartInstance("loader/eu", answering: [])])
    }

    @Test func theWaitDoublesWhileItKeepsEndingThenItStaysEnded() {
        var core = welcomed()
        var now = start
        var waits: [Int64] = []
        for _ in 0..<Self.intensity {
            #expect(!core.machineEnded("form", now: now).isEmpty)
            // The same end told twice (the runtime notes ends once, but a duplicate must not
            // count twice): nothing more.
            #expect(core.machineEnded("form", now: now) == [])
            guard let restartAt = core.endings["form"]?.restartAt else {
                Issue.record("no restart scheduled after \(waits.count) restarts")
                return
            }
            waits.append((restartAt - now).wholeMilliseconds)
            now = restartAt
            #expect(restarts(core.tick(now: now)) == [.restartInstance("form", answering: [])])
            now += ms(10) // it runs 10 ms, then ends again
        }
        #expect(waits == [100, 200, 400, 800, 1600])
        // The sixth end within 10 s: it stays ended, said as an error with what to do.
        let gaveUp = core.machineEnded("form", now: now)
        #expect(session.logs(gaveUp, .error, "ended 6 times within 10 s; it is not restarted again"), "\(gaveUp)")
        #expect(session.logs(gaveUp, .error, "fsm-send restart form"), "\(gaveUp)")
        #expect(restarts(core.tick(now: now + .seconds(60))).isEmpty)
        // An admin's restart starts it again, and its count starts over.
        #expect(core.restartRequested("form", correlation: 7, running: false) == [.restartInstance("form", answering: [7])])
        _ = core.machineEnded("form", now: now + .seconds(61))
        #expect(core.endings["form"]?.restartAt == now + .seconds(61) + ms(100))
    }

    static let intensity = RestartPolicy().intensity

    @Test func endsOlderThanThePeriodAreForgotten() {
        var core = welcomed()
        var now = start
        for _ in 0..<10 {
            _ = core.machineEnded("form", now: now)
            #expect(core.endings["form"]?.restartAt == now + ms(100), "an end 10 s after the last waits the first wait again")
            _ = core.tick(now: now + ms(100))
            now += .seconds(10)
        }
        _ = core.tick(now: now + .seconds(10))
        #expect(core.endings.isEmpty, "an instance that runs for the whole period is forgotten")
    }

    @Test func anAdminRestartOfARunningMachineStopsItThenRestartsItAtItsEnd() {
        for machine in ["counter", "form", "session/s-1"] {
            var core = welcomed()
            #expect(core.restartRequested(machine, correlation: 1, running: true) == [.stopInstance(machine)], "\(machine)")
            #expect(core.restartRequested(machine, correlation: 2, running: true) == [], "stopped already: \(machine)")
            // Its end restarts it at once and answers both, whatever its policy (even remove).
            #expect(core.machineEnded(machine, now: start) == [.restartInstance(machine, answering: [1, 2])], "\(machine)")
            #expect(core.endings[machine] == nil)
            #expect(restarts(core.tick(now: start + .seconds(1))).isEmpty, "\(machine): no second restart by the policy")
        }
    }

    @Test func anAdminRestartReplacesAPendingRestart() {
        var core = welcomed()
        _ = core.machineEnded("form", now: start)
        #expect(core.restartRequested("form", correlation: 3, running: false) == [.restartInstance("form", answering: [3])])
        #expect(core.endings["form"] == nil, "its pending restart is forgotten")
        #expect(restarts(core.tick(now: start + .seconds(1))).isEmpty, "the policy's restart is not run as well")
    }

    @Test func aWelcomeThatDropsAMachineForgetsItsEnds() {
        var core = welcomed()
        _ = core.machineEnded("form", now: start)
        _ = core.restartRequested("counter", correlation: 4, running: true)
        _ = core.welcome(session.welcome(machines: [Self.staying]), now: start + ms(10))
        #expect(core.endings.keys.sorted() == ["counter"])
        #expect(restarts(core.tick(now: start + .seconds(1))).isEmpty)
    }

    @Test func aMachinesRestartSettingsFromTheWelcomeSetItsWaitsItsIntensityAndItsPeriod() {
        let tuned = Welcome.HostedMachine(name: "form", type: "Counter", keyed: false, onEnd: .restart,
                                          restart: RestartPolicy(intensity: 2, periodMs: 3000, backoff: .init(initialMs: 50, maxMs: 120)))
        var core = session.core()
        _ = core.welcome(session.welcome(machines: [tuned]), now: start)
        var now = start
        var waits: [Int64] = []
        for _ in 0..<3 {
            _ = core.machineEnded("form", now: now)
            guard let restartAt = core.endings["form"]?.restartAt else { break }
            waits.append((restartAt - now).wholeMilliseconds)
            now = restartAt
            _ = core.tick(now: now)
            now += ms(10)
        }
        #expect(waits == [50, 100], "doubled, and the third end within 3 s is one past intensity 2")
        #expect(core.endings["form"]?.gaveUp == true)
        let log = core.restartRequested("form", correlation: 1, running: false)
        #expect(log == [.restartInstance("form", answering: [1])])
        // Its period is 3 s: an end 3 s after the last waits the first wait again; the
        // default's 10 s would double it.
        _ = core.machineEnded("form", now: now)
        _ = core.tick(now: now + ms(50))
        _ = core.machineEnded("form", now: now + .seconds(3) + ms(50))
        #expect(core.endings["form"]?.restartAt == now + .seconds(3) + ms(100))
        // Capped at its maxMs.
        #expect(RestartPolicy(backoff: .init(initialMs: 50, maxMs: 120)).wait(ends: 4) == ms(120))
    }

    @Test func aMachineWhoseIntensityIsNaughtIsNeverRestartedByItsPolicy() {
        var core = session.core()
        let never = Welcome.HostedMachine(name: "form", type: "Counter", keyed: false, onEnd: .restart, restart: RestartPolicy(intensity: 0))
        _ = core.welcome(session.welcome(machines: [never]), now: start)
        let ended = core.machineEnded("form", now: start)
        #expect(session.logs(ended, .error, "ended 1 time within 10 s"), "\(ended)")
        #expect(restarts(core.tick(now: start + .seconds(60))).isEmpty)
    }

    @Test func thePolicyComesFromTheWelcome() {
        let core = welcomed()
        #expect(core.endPolicy(of: "counter") == .stay)
        #expect(core.endPolicy(of: "form") == .restart)
        #expect(core.endPolicy(of: "session/a/b") == .remove)
        #expect(core.endPolicy(of: "unknown") == .stay)
        #expect(RestartPolicy().wait(ends: 1) == ms(100))
        #expect(RestartPolicy().wait(ends: 7) == ms(5000), "capped at 5 s")
    }
}
