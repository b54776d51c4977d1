@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
@_spi(GroveInternal) import GroveWire
import Logging
import Testing

/// The worker's side of incarnations and epochs: which process it says it is, what it does when
/// told a newer one has its name, and the report of its keyed instances after each welcome.
@Suite(.timeLimit(.minutes(2))) struct WorkerCoreIncarnationTests {
    let start = ContinuousClock.now
    let session = WorkerCoreTests()
    static let me = WorkerIncarnation(id: 0xA, startedAtMs: 1_000)

    func core() -> WorkerCore {
        WorkerCore(worker: "edge", coordinator: session.endpoint, machineTypes: ["Counter", "DataLoader"], now: start,
                   incarnation: Self.me)
    }

    func welcome(epoch: UInt64?) -> [UInt8] {
        var welcome = try! WireJSON.decode(Welcome.self, from: session.welcome())
        welcome.epoch = epoch
        welcome.incarnation = Self.me.id
        return try! WireJSON.encode(welcome)
    }

    func exits(_ actions: [WorkerAction]) -> (status: WorkerExitStatus, text: String)? {
        for case .exit(let reason) in actions { return (reason.status, reason.message) }
        return nil
    }

    @Test func theRegistrationSaysWhichProcessThisIs() {
        let registration = core().registration(pid: 4242, ioHandlers: ["FetchItems"])
        #expect(registration.incarnation == 0xA)
        #expect(registration.startedAtMs == 1_000)
        #expect(registration.pid == 4242)
        #expect(registration.machineTypes == ["Counter", "DataLoader"])
    }

    @Test func everyWelcomeIsFollowedByTheReportOfKeyedInstances() {
        var core = core()
        let first = core.welcome(welcome(epoch: 7), now: start)
        #expect(first.prefix(3).last == .reportInstances, "after opening the outflow and adopting: \(first)")
        // Registered again with the same coordinator (after a SIGSTOP): reported again, since the
        // coordinator stopped listing them when it lost this worker.
        let again = core.welcome(welcome(epoch: 7), now: start + .seconds(3))
        #expect(again.prefix(3).last == .reportInstances, "\(again)")
        #expect(!session.logs(again, .notice, "restarted"), "the same coordinator life")
    }

    @Test func aNewEpochInAWelcomeIsLoggedAsACoordinatorRestart() {
        var core = core()
        _ = core.welcome(welcome(epoch: 7), now: start)
        let restarted = core.welcome(welcome(epoch: 9), now: start + .seconds(3))
        #expect(session.logs(restarted, .notice, "restarted (epoch 7 → 9)"), "\(restarted)")
        #expect(core.epoch == 9)
    }

    @Test func supersededEndsTheProcessSayingWhy() throws {
        var core = core()
        _ = core.welcome(welcome(epoch: 7), now: start)
        let refusal = WireError(.superseded, "worker edge incarnation 10 (pid 1) is superseded: incarnation 11 (pid 2) replaced it").payload
        let exit = try #require(exits(core.coordinatorError(refusal, correlation: core.registrationCorrelation, now: start)))
        #expect(exit.status == .configuration, "not restarted by fsm-launch: it would displace the newer one")
        #expect(exit.text.contains("refused this process: worker edge incarnation 10 (pid 1) is superseded"), "\(exit.text)")
        #expect(exit.text.contains("incarnation 11 (pid 2) replaced it"), "\(exit.text)")
    }

    @Test func aHeartbeatNamingAnotherIncarnationEndsTheProcess() throws {
        var core = core()
        _ = core.welcome(welcome(epoch: 7), now: start)
        let mine = try WireJSON.encode(HeartbeatNote(incarnation: 0xA))
        #expect(core.decide(Header(.heartbeat), payload: mine[...], now: start) == .ignore)
        #expect(core.decide(Header(.heartbeat), payload: [][...], now: start) == .ignore, "an empty heartbeat says nothing")

        let other = try WireJSON.encode(HeartbeatNote(incarnation: 0xB))
        guard case .act(let actions) = core.decide(Header(.heartbeat), payload: other[...], now: start) else {
            Issue.record("a heartbeat naming another incarnation should end the process")
            return
        }
        let exit = try #require(exits(actions))
        #expect(exit.status == .configuration)
        #expect(exit.text.contains("incarnation 11 registered as edge"), "\(exit.text)")
    }

    /// A process stopped (SIGSTOP) past the heartbeat timeout was declared lost, and a newer
    /// process may hold its name by now. When it continues, its socket reconnects and, with
    /// `ROUTER_HANDOVER`, takes the name back for a moment: what comes to it then may be the
    /// newer process's requests. The batch that comes before its first tick must not count as
    /// proof of life (the tick would then see no silence) nor be served: it is dropped, the
    /// session ends, and the worker registers again, where it is told it was superseded.
    @Test func aBatchAfterTheWorkerDidNotRunPastTheTimeoutIsDroppedAndItRegistersAgain() throws {
        var core = core()
        _ = core.welcome(welcome(epoch: 7), now: start)
        let timeout = core.timeout
        _ = core.tick(now: start)
        #expect(core.heard(at: start + timeout) == nil, "ticked within the timeout: served")

        let woke = start + timeout + .milliseconds(1)
        let heard = core.heard(at: woke)
        let ended = try #require(heard, "a batch after the stop is not served")
        #expect(!core.isWelcomed)
        #expect(ended.contains(.closeOutflow), "nothing its machines send leaves: \(ended)")
        #expect(session.failures(ended).map(\.code) == ["coordinator-lost"])
        #expect(session.logs(ended, .warning, "this process was stopped or stalled"), "\(ended)")
        #expect(session.logs(ended, .warning, "Dropping what just came unread"), "\(ended)")
        // Whatever comes next before it registered again is no proof of life either.
        let later = core.tick(now: woke + .milliseconds(50))
        #expect(!session.isReconnect(later) && !later.contains(.heartbeat), "\(later)")
        let again = core.tick(now: woke + .milliseconds(100))
        #expect(again.prefix(2) == [.reconnect, .register], "a new socket registers after the first backoff: \(again)")

        let refusal = WireError(.superseded, "worker edge incarnation 10 (pid 1) is superseded: incarnation 11 (pid 2) replaced it").payload
        #expect(exits(core.coordinatorError(refusal, correlation: 0xA, now: woke + .milliseconds(101)))?.status == .configuration)
    }

    /// Issue 34, the superseded race: a process the supervisor started in place of one that
    /// died may reach the coordinator while the name is still registered to the dead one (its
    /// exit not processed yet, or a registration it sent before dying read late). Until its own
    /// registration is answered, what names the dead one (its heartbeats, its welcome, the
    /// refusal of its late registration) must not stop the new process: exit 78 is final, and
    /// the supervisor would give up on the group.
    @Test func whatNamesTheProcessThisOneReplacesDoesNotStopIt() throws {
        var core = core()
        let registering = core.start()
        #expect(registering == [.register])
        let predecessor: UInt64 = 0x9
        let heartbeat = try WireJSON.encode(HeartbeatNote(incarnation: predecessor))
        #expect(core.decide(Header(.heartbeat), payload: heartbeat[...], now: start) == .ignore, "not welcomed yet")

        var theirs = try WireJSON.decode(Welcome.self, from: session.welcome())
        theirs.incarnation = predecessor
        let ignored = core.welcome(try WireJSON.encode(theirs), now: start)
        #expect(exits(ignored) == nil)
        #expect(!core.isWelcomed, "another process's welcome: \(ignored)")
        #expect(session.logs(ignored, .notice, "ignored a welcome for incarnation 9"), "\(ignored)")

        let refusal = WireError(.superseded, "worker edge incarnation 9 (pid 1) is superseded: its process (pid 1) ended").payload
        let other = core.coordinatorError(refusal, correlation: predecessor, now: start)
        #expect(exits(other) == nil, "the refusal of the dead process's registration: \(other)")

        // Its own welcome, then a heartbeat naming another incarnation: now it was replaced.
        _ = core.welcome(welcome(epoch: 7), now: start)
        #expect(core.isWelcomed)
        guard case .act(let actions) = core.decide(Header(.heartbeat), payload: heartbeat[...], now: start) else {
            Issue.record("welcomed, a heartbeat naming another incarnation ends the process")
            return
        }
        #expect(exits(actions)?.status == .configuration)
    }

    /// The event the last process died running goes with this process's registrations until
    /// its first welcome, when the coordinator has attributed it.
    @Test func theCrashReportGoesWithTheRegistrationsUntilTheFirstWelcome() {
        var core = core()
        let report = CrashReport(address: "counter/k-1", type: "Counter", event: "add", origin: "sent", correlation: 42)
        core.crashReport = report
        #expect(core.registration(pid: 1, ioHandlers: []).crash == report)
        #expect(core.registration(pid: 1, ioHandlers: []).crash == report, "a retry carries it too")
        _ = core.welcome(welcome(epoch: 7), now: start)
        #expect(core.registration(pid: 1, ioHandlers: []).crash == nil)
    }

    /// Only a worker that did not run ends its session on a batch: one that ticked all along
    /// leaves silence to its tick, and a driver that does not tick (a test's) never drops one.
    @Test func aBatchEndsTheSessionOnlyAfterTheWorkerItselfDidNotRun() {
        var ticking = core()
        _ = ticking.welcome(welcome(epoch: 7), now: start)
        let timeout = ticking.timeout
        var at = start
        for _ in 0..<10 {
            _ = ticking.tick(now: at)
            at += timeout
            #expect(ticking.heard(at: at) == nil, "ticked a timeout ago at most")
        }
        #expect(ticking.isWelcomed)

        var untimed = core()
        _ = untimed.welcome(welcome(epoch: 7), now: start)
        #expect(untimed.heard(at: start + timeout * 10) == nil, "no tick to measure a stop by")
        #expect(untimed.isWelcomed)
    }
}
