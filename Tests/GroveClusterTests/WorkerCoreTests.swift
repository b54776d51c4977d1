@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
@_spi(GroveInternal) import GroveWire
import Logging
import Testing

/// The worker's session with its coordinator, fed welcomes, errors and ticks: no sockets.
@Suite(.timeLimit(.minutes(2))) struct WorkerCoreTests {
    let start = ContinuousClock.now
    let endpoint = "ipc:///run/test/workers"

    func core() -> WorkerCore { WorkerCore(worker: "edge", coordinator: endpoint, machineTypes: ["Counter", "DataLoader"], now: start) }

    func welcome(intervalMs: Int = 50, timeoutMs: Int = 200, machines: [Welcome.HostedMachine] = [counter, loader],
                 remoteIO: [String] = ["FetchItems"], mailboxCapacity: Int = 1000) -> [UInt8] {
        let welcome = Welcome(machines: machines, remoteIO: remoteIO, heartbeatIntervalMs: intervalMs,
                              heartbeatTimeoutMs: timeoutMs, mailboxCapacity: mailboxCapacity)
        return try! WireJSON.encode(welcome)
    }

    static let counter = Welcome.HostedMachine(name: "counter", type: "Counter", keyed: false)
    static let loader = Welcome.HostedMachine(name: "loader", type: "DataLoader", keyed: true)

    func ms(_ value: Int) -> Duration { .milliseconds(value) }

    /// The ticks between `from` and `to` (inclusive) every `step`, with their actions.
    func ticks(_ core: inout WorkerCore, from: Duration, to: Duration, step: Duration = .milliseconds(10))
        -> [(at: Duration, actions: [WorkerAction])] {
        var out: [(Duration, [WorkerAction])] = []
        var at = from
        while at <= to {
            let actions = core.tick(now: start + at)
            if !actions.isEmpty { out.append((at, actions)) }
            at += step
        }
        return out
    }

    func isReconnect(_ actions: [WorkerAction]) -> Bool { actions.contains(.reconnect) }

    /// Whether `actions` log a line at `level` containing `text`. (A helper, not a closure inside
    /// `#expect`: Swift 6.3 may run the wrong closure of a macro expansion.)
    func logs(_ actions: [WorkerAction], _ level: Logger.Level, _ text: String) -> Bool {
        for case .log(let logged, let line) in actions where logged == level && line.contains(text) { return true }
        return false
    }

    func failures(_ actions: [WorkerAction]) -> [IOCallResult.Failure] {
        actions.compactMap { action in
            if case .failRemoteCalls(let failure) = action { return failure }
            return nil
        }
    }

    @Test func registersFirstAndHeartbeatsAtTheWelcomesInterval() {
        var core = core()
        #expect(core.start() == [.register])
        #expect(core.tickInterval == ms(50), "before a welcome: a fifth of the default 250 ms")
        #expect(core.tick(now: start + ms(100)).isEmpty, "no heartbeat before the welcome")

        let actions = core.welcome(welcome(intervalMs: 50, timeoutMs: 200), now: start + ms(100))
        #expect(actions.prefix(2) == [.openOutflow, .adopt(try! WireJSON.decode(Welcome.self, from: welcome()), dropping: [])],
                "what the machines send flows before they are adopted (recovered instances publish their states)")
        #expect(core.isWelcomed)
        #expect(core.interval == ms(50) && core.timeout == ms(200))
        #expect(core.tickInterval == ms(10))

        // Heard all along: a heartbeat every 50 ms, nothing else.
        var heartbeats: [Duration] = []
        var at = ms(110)
        while at <= ms(400) {
            #expect(core.heard(at: start + at) == nil)
            let actions = core.tick(now: start + at)
            let onlyHeartbeats = actions.allSatisfy { $0 == .heartbeat }
            #expect(onlyHeartbeats, "\(actions)")
            if !actions.isEmpty { heartbeats.append(at) }
            at += ms(10)
        }
        #expect(heartbeats == [ms(110), ms(160), ms(210), ms(260), ms(310), ms(360)])
    }

    @Test func aSilentCoordinatorFailsTheCallsThenReconnectsWithABackoffThatGrowsAndIsCapped() throws {
        var core = core()
        _ = core.welcome(welcome(intervalMs: 50, timeoutMs: 200), now: start)

        // Heard last at 0: silent past 200 ms.
        let beforeTimeout = core.tick(now: start + ms(200))
        #expect(failures(beforeTimeout).isEmpty && !isReconnect(beforeTimeout))
        let silent = core.tick(now: start + ms(210))
        let failure = try #require(failures(silent).first)
        #expect(failure.code == "coordinator-lost")
        #expect(failure.message.contains("the coordinator at \(endpoint) was silent for 210 ms"), "\(failure.message)")
        #expect(!isReconnect(silent), "the first reconnection waits out the first backoff")
        #expect(logs(silent, .warning, "keeping its machines"))
        #expect(silent.contains(.closeOutflow), "replies to a coordinator that gave up on the session are dropped")
        #expect(!core.isWelcomed)

        // No welcome ever comes: the reconnections, each after the timeout plus a backoff.
        let reconnections = ticks(&core, from: ms(220), to: .seconds(40)).filter { isReconnect($0.actions) }
        for reconnection in reconnections {
            let index = try #require(reconnection.actions.firstIndex(of: .reconnect))
            #expect(reconnection.actions[index + 1] == .register, "a new socket registers at once")
            #expect(failures(reconnection.actions).isEmpty, "no call can start meanwhile: nothing more to fail")
        }
        let times = reconnections.map(\.at)
        #expect(times.first == ms(310), "100 ms after the silence was noticed")
        let gaps = zip(times.dropFirst(), times).map { $0 - $1 }
        // Each attempt waits the timeout for a welcome, then 200, 400, ... ms, at most 5 s.
        let expected: [Duration] = [200, 400, 800, 1600, 3200, 5000, 5000, 5000, 5000].map { ms(200 + $0) }
        #expect(Array(gaps.prefix(expected.count)) == expected, "\(gaps)")
        let longest = gaps.max()
        #expect(longest == ms(5200), "never longer than the timeout and the 5 s cap")
    }

    @Test func aWelcomeAfterReconnectingResetsTheBackoff() {
        var core = core()
        _ = core.welcome(welcome(), now: start)
        // Silent, then four reconnections without a welcome: the backoff has grown to 1.6 s.
        let before = ticks(&core, from: ms(210), to: ms(4200)).filter { isReconnect($0.actions) }.map(\.at)
        #expect(before.count == 5, "\(before)")

        let lastAttempt = before.last!
        _ = core.welcome(welcome(), now: start + lastAttempt + ms(20))
        #expect(core.isWelcomed)
        // Silent again: the first reconnection comes after 100 ms again, the next 200 ms + timeout later.
        let resumedAt = lastAttempt + ms(20)
        let after = ticks(&core, from: resumedAt, to: resumedAt + ms(1000)).filter { isReconnect($0.actions) }.map(\.at)
        let sinceWelcome = after.map { $0 - resumedAt }
        #expect(sinceWelcome == [ms(310), ms(710)], "\(after)")
    }

    @Test func machinesStillPlacedAsBeforeAreKeptAcrossAWelcome() {
        var core = core()
        let first = core.welcome(welcome(), now: start)
        #expect(first.contains(.adopt(try! WireJSON.decode(Welcome.self, from: welcome()), dropping: [])))

        // Re-registered after silence; the same placement: everything stays.
        let same = core.welcome(welcome(), now: start + .seconds(3))
        guard case .adopt(_, let dropping) = same.dropFirst().first else { Issue.record("no adopt: \(same)"); return }
        #expect(dropping.isEmpty)
        #expect(logs(same, .notice, #"kept machines ["counter", "loader"]"#), "\(same)")

        // The coordinator came back with another topology: loader is gone, counter has another type.
        let other = Welcome.HostedMachine(name: "counter", type: "PlainCounter", keyed: false)
        let changed = core.welcome(welcome(machines: [other, .init(name: "form", type: "UserForm", keyed: false)]), now: start + .seconds(6))
        guard case .adopt(let adopted, let dropped) = changed.dropFirst().first else { Issue.record("no adopt: \(changed)"); return }
        #expect(dropped == ["counter", "loader"])
        #expect(adopted.machines.map(\.name) == ["counter", "form"])
        #expect(core.placed.keys.sorted() == ["counter", "form"])

        // io placed elsewhere now: running instances cannot follow, so all of them go.
        let moved = core.welcome(welcome(machines: [other], remoteIO: []), now: start + .seconds(9))
        guard case .adopt(_, let droppedAll) = moved.dropFirst().first else { Issue.record("no adopt: \(moved)"); return }
        #expect(droppedAll == ["counter", "form"])
    }

    @Test func unavailableMeansRegisterAgainOnceAndFailTheCalls() throws {
        var core = core()
        _ = core.welcome(welcome(), now: start)
        let unavailable = WireError(.unavailable, "worker edge is not registered with this coordinator; send register first").payload

        let first = core.coordinatorError(unavailable, now: start + ms(10))
        #expect(first.contains(.register))
        #expect(first.contains(.closeOutflow), "replies to a coordinator that forgot this worker answer nothing")
        #expect(failures(first).first?.code == "coordinator-lost")
        #expect(!core.isWelcomed)
        // More refusals of the same kind while the registration is in flight: no second one.
        #expect(core.coordinatorError(unavailable, now: start + ms(20)).isEmpty)
        #expect(!isReconnect(core.tick(now: start + ms(100))), "the socket is fine: no reconnection")
    }

    @Test func droppedMessagesAreToldWhenTheOutflowOpensAgain() {
        let core = core()
        #expect(core.reopened(dropped: 0).isEmpty)
        #expect(logs(core.reopened(dropped: 7), .notice, "dropped 7 message(s) this worker's machines sent while the coordinator had given up"))
    }

    @Test func aRejectedRegistrationEndsTheProcessWithItsStatus() {
        var core = core()
        let rejected = WireError(.registrationRejected, "worker name 'edge' is not in topology 't'").payload
        let actions = core.coordinatorError(rejected, now: start)
        #expect(actions == [.exit(.rejected("the coordinator rejected this worker: worker name 'edge' is not in topology 't'"))])
    }

    @Test func aWorkerNobodyWelcomesSaysSoAfterThreeSecondsThenEveryFifteen() {
        var core = core()
        let notices = ticks(&core, from: .zero, to: .seconds(34), step: ms(50)).filter { entry in
            logs(entry.actions, .notice, "not registered yet: no welcome from a coordinator at \(endpoint) in ")
        }.map(\.at)
        #expect(notices == [.seconds(3), .seconds(18), .seconds(33)], "\(notices)")
    }

    @Test func kindsForOthersAreRefusedWithTheReason() throws {
        let accepted: [MessageKind] = [.event, .get, .cancel, .stop, .restart, .echo, .welcome, .heartbeat, .observe, .ioRequest, .ioResult, .ioCancel, .error]
        for kind in accepted { #expect(WorkerCore.refusal(of: kind) == nil, "\(kind.name)") }

        let refused = try #require(WorkerCore.refusal(of: .register))
        #expect(refused.code == .unknownKind)
        #expect(refused.message == "a worker does not accept register messages: register goes from a worker to the coordinator")
        for kind: MessageKind in [.list, .batch, .state, .accepted, .listing, .ioCancelled, .stateChanged, .effect, .worker, .output, .machine] {
            let error = try #require(WorkerCore.refusal(of: kind), "\(kind.name)")
            #expect(error.message.hasPrefix("a worker does not accept \(kind.name) messages: "))
        }
    }

    @Test func theBackoffDoublesFrom100MillisecondsUpTo5Seconds() {
        #expect((1...8).map(WorkerCore.backoff(attempt:)) == [100, 200, 400, 800, 1600, 3200, 5000, 5000].map { ms($0) })
        #expect(WorkerCore.backoff(attempt: 1000) == .seconds(5))
    }
}
