@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
@_spi(GroveInternal) import GroveWire
import Testing

/// Incarnations and epochs (issue 21, item 5): a reply from an earlier life never answers a
/// newer request, the newest process keeps a worker name, and a worker's keyed instances are
/// listed as soon as it reports them.
@Suite("CoordinatorCore: incarnations and epochs", .timeLimit(.minutes(2)))
struct CoordinatorCoreIncarnationTests {
    static let state = Array(#"{"count":1}"#.utf8)

    /// `edge`'s registration as the process `incarnation`, started at `startedAtMs`.
    static func edge(_ incarnation: UInt64, startedAtMs: Int64, pid: Int32 = 101) -> Registration {
        var registration = CoreFixture.registration("edge")
        registration.incarnation = incarnation
        registration.startedAtMs = startedAtMs
        registration.pid = pid
        return registration
    }

    func reply(_ correlation: UInt64) -> WireMessage {
        WireMessage(Header(.state, correlation: correlation), address: "auth", payload: Self.state)
    }

    func welcome(in actions: [CoordinatorAction]) throws -> Welcome? {
        guard let message = actions.compactMap(\.sentToWorker).first(where: { $0.message.header.kind == .welcome }) else { return nil }
        return try payload(Welcome.self, of: message.message)
    }

    func superseded(in actions: [CoordinatorAction]) throws -> WireError? {
        guard let message = actions.compactMap(\.sentToWorker).first(where: { $0.message.header.kind == .error }) else { return nil }
        let error = try payload(WireError.self, of: message.message)
        return error.code == .superseded ? error : nil
    }

    func warnings(in actions: [CoordinatorAction]) -> [String] {
        actions.compactMap { if case .warn(let text) = $0 { text } else { nil } }
    }

    // MARK: - (a) a coordinator that restarted

    @Test func aLateReplyFromAnEarlierCoordinatorLifeAnswersNoRequestOfTheNewOne() throws {
        // The first life forwards a request to edge, then dies before edge answers.
        var first = CoreFixture(epoch: CorrelationEpoch(0x0A))
        first.registerAll()
        let old = try first.sendEvent("A", to: "auth", correlation: 3)

        // The next life counts from 1 again; edge registers with it and gets a new request.
        var second = CoreFixture(epoch: CorrelationEpoch(0x0B))
        let registered = second.registerAll()
        #expect(try welcome(in: registered)?.epoch == 0x0B, "the welcome tells workers the epoch")
        let new = try second.sendEvent("B", to: "auth", correlation: 7)
        #expect(CorrelationEpoch.of(old.id) == 0x0A && CorrelationEpoch.of(new.id) == 0x0B)
        #expect(old.id & CorrelationEpoch.counterMask == new.id & CorrelationEpoch.counterMask, "both lives counted from 1")

        // edge answers the old life's request late: it must not answer B's.
        #expect(second.fromWorker("edge", reply(old.id)) == [], "a reply of the earlier life is dropped")
        #expect(second.core.pending.count == 1, "B's request still waits")
        #expect(second.fromWorker("edge", reply(new.id)) == [.toClient(Array("B".utf8), WireMessage(
            Header(.state, correlation: 7), address: "auth", payload: Self.state))])
    }

    @Test func idsCarryTheEpochAndWrapToOneNotZero() {
        var core = CoordinatorCore(topology: CoreFixture.topology, eventsEndpoint: "inproc://events", epoch: CorrelationEpoch(0x6B_CDEF))
        core.nextID = CorrelationEpoch.counterMask
        #expect(core.takeID() == 0x6B_CDEF << 40 | CorrelationEpoch.counterMask)
        #expect(core.takeID() == UInt64(0x6B_CDEF) << 40 | 1)
        #expect(CorrelationEpoch.random().value != 0)
    }

    /// Bit 63 of an id is never set, whatever the epoch: a worker folds the reply's codec into
    /// it (its hosts' reply tokens), and an id with it set sent every queued event of that
    /// coordinator life down a slower path that also lost the reply's `unhandled` flag.
    @Test func noIdSetsTheTopBit() {
        for epoch in [CorrelationEpoch(0xFF_FFFF), CorrelationEpoch(.max), CorrelationEpoch(CorrelationEpoch.largest)] {
            #expect(epoch.id(CorrelationEpoch.counterMask) >> 63 == 0, "\(epoch)")
        }
        for _ in 0..<1000 { #expect(CorrelationEpoch.random().id(1) >> 63 == 0) }
    }

    // MARK: - (b) a worker process replaced under the same name

    @Test func aReplacedIncarnationIsRefusedAsSupersededAndLoggedOnce() throws {
        var fixture = CoreFixture()
        fixture.register("data-1", "data-2")
        #expect(try welcome(in: fixture.register(Self.edge(0xA, startedAtMs: 1_000)))?.incarnation == 0xA)
        // A is stopped: lost by silence. B starts under the same name and registers.
        _ = fixture.core.tick(now: fixture.t0 + .seconds(2))
        let b = fixture.register(Self.edge(0xB, startedAtMs: 5_000, pid: 102), after: .seconds(2))
        #expect(try welcome(in: b) != nil, "the newer process is welcomed")

        // A continues and registers again: refused, told to stop, logged with both incarnations.
        let a = fixture.register(Self.edge(0xA, startedAtMs: 1_000), after: .seconds(3))
        let refusal = try #require(try superseded(in: a), "\(a)")
        #expect(refusal.message.contains("incarnation 10 (pid 101) is superseded"), "\(refusal.message)")
        #expect(refusal.message.contains("incarnation 11 (pid 102) replaced it"), "\(refusal.message)")
        #expect(warnings(in: a).count == 1)
        #expect(warnings(in: a).first?.contains("incarnation 10") == true && warnings(in: a).first?.contains("incarnation 11") == true)
        #expect(try welcome(in: a) == nil)
        #expect(fixture.core.workers["edge"]?.registered == true && fixture.core.workers["edge"]?.pid == 102, "B keeps the name")

        // Again: refused again, not logged again.
        let again = fixture.register(Self.edge(0xA, startedAtMs: 1_000), after: .seconds(3))
        #expect(try superseded(in: again) != nil)
        #expect(warnings(in: again).isEmpty, "logged once")

        // The heartbeats name B, so a replaced process that never registers again learns it too.
        let beats = fixture.core.tick(now: fixture.t0 + .seconds(3)).compactMap(\.sentToWorker).filter { $0.worker == "edge" }
        #expect(try beats.map { try payload(HeartbeatNote.self, of: $0.message) } == [HeartbeatNote(incarnation: 0xB)])
    }

    @Test func afterACoordinatorRestartTheProcessStartedLaterKeepsTheName() throws {
        // A coordinator that never saw the replacement: the start times decide.
        var fixture = CoreFixture()
        #expect(try welcome(in: fixture.register(Self.edge(0xB, startedAtMs: 5_000, pid: 102))) != nil)
        let older = fixture.register(Self.edge(0xA, startedAtMs: 1_000))
        let refusal = try #require(try superseded(in: older))
        #expect(refusal.message.contains("it started before incarnation 11 (pid 102)"), "\(refusal.message)")
        #expect(fixture.core.workers["edge"]?.pid == 102)

        // A process started later replaces the registered one, as a restart does.
        let newer = fixture.register(Self.edge(0xC, startedAtMs: 9_000, pid: 103))
        #expect(newer.contains(.lost(worker: "edge", cause: .registeredAgain, pid: 102)))
        #expect(warnings(in: newer).contains { $0.contains("the newer process keeps the name and the older one is told to stop") })
        #expect(try welcome(in: newer)?.incarnation == 0xC)
        #expect(try superseded(in: fixture.register(Self.edge(0xB, startedAtMs: 5_000, pid: 102))) != nil,
                "the replaced one cannot come back")
    }

    @Test func aRegistrationWithoutAnIncarnationRegistersAsBefore() throws {
        var fixture = CoreFixture()
        _ = fixture.register(Self.edge(0xB, startedAtMs: 5_000, pid: 102))
        // An older worker, or one in another language, that sends none.
        #expect(try welcome(in: fixture.register(CoreFixture.registration("edge"))) != nil)
        let beat = try #require(fixture.core.tick(now: fixture.t0).compactMap(\.sentToWorker).first { $0.worker == "edge" })
        #expect(beat.message.payload.isEmpty, "nothing to name")
    }

    // MARK: - (b') the coordinator decides which is newer

    /// A fixture whose coordinator's wall clock reads 1,000,000 ms at `t0`.
    static func clocked() -> CoreFixture {
        var fixture = CoreFixture()
        fixture.core = CoordinatorCore(topology: CoreFixture.topology, eventsEndpoint: "inproc://events",
                                       wallClock: CoordinatorWallClock(instant: fixture.t0, millisecondsSince1970: 1_000_000))
        return fixture
    }

    @Test func aStartClaimedInTheFutureCountsAsTheArrivalSoTheNextProcessReplacesIt() throws {
        var fixture = Self.clocked()
        fixture.register("data-1", "data-2")
        // Registered at 1,000,000 on the coordinator's clock, claiming a start ten years on.
        let future: Int64 = 1_000_000 + 10 * 365 * 86_400_000
        #expect(try welcome(in: fixture.register(Self.edge(0xF, startedAtMs: future, pid: 666))) != nil)
        #expect(fixture.core.incarnations["edge"]?.current?.startedAtMs == 1_000_000, "clamped to its arrival")
        // A process started after it came replaces it, as any newer process does.
        let next = fixture.register(Self.edge(0xB, startedAtMs: 1_000_500, pid: 102), after: .seconds(1))
        #expect(try welcome(in: next) != nil, "\(next)")
        #expect(next.contains(.lost(worker: "edge", cause: .registeredAgain, pid: 666)))
        #expect(fixture.core.workers["edge"]?.pid == 102)
        // And the one that claimed the future is refused should it come back.
        #expect(try superseded(in: fixture.register(Self.edge(0xF, startedAtMs: future, pid: 666), after: .seconds(2))) != nil)
    }

    @Test func theSameProcessComingBackKeepsTheStartItWasFirstGiven() throws {
        var fixture = Self.clocked()
        fixture.register("data-1", "data-2")
        let future: Int64 = 9_000_000_000
        _ = fixture.register(Self.edge(0xF, startedAtMs: future, pid: 666))
        // It comes back ten seconds later: welcomed, still started at its first arrival.
        #expect(try welcome(in: fixture.register(Self.edge(0xF, startedAtMs: future, pid: 666), after: .seconds(10))) != nil)
        #expect(fixture.core.incarnations["edge"]?.current?.startedAtMs == 1_000_000)
        // So a process started in between is newer.
        #expect(try welcome(in: fixture.register(Self.edge(0xB, startedAtMs: 1_005_000, pid: 102), after: .seconds(11))) != nil)
    }

    @Test func aStartInThePastIsTakenAsClaimed() throws {
        var fixture = Self.clocked()
        _ = fixture.register(Self.edge(0xB, startedAtMs: 900_000, pid: 102))
        #expect(fixture.core.incarnations["edge"]?.current?.startedAtMs == 900_000)
        // An older process (stopped, then continued) never displaces it.
        #expect(try superseded(in: fixture.register(Self.edge(0xA, startedAtMs: 800_000))) != nil)
    }

    @Test func theWallClockIsReadOffTheMonotonicOne() {
        let t0 = ContinuousClock.now
        let clock = CoordinatorWallClock(instant: t0, millisecondsSince1970: 5_000)
        #expect(clock.milliseconds(at: t0 + .milliseconds(1_234)) == 6_234)
        #expect(clock.milliseconds(at: t0 - .seconds(2)) == 3_000)
    }

    // MARK: - (c) the same process registering again

    @Test func theSameIncarnationComesBackAndItsRepliesToRequestsAnsweredWorkerLostAreDropped() throws {
        var fixture = CoreFixture()
        fixture.register("data-1", "data-2")
        _ = fixture.register(Self.edge(0xA, startedAtMs: 1_000))
        let before = try fixture.sendEvent("A", to: "auth", correlation: 4)

        // Stopped past the timeout: lost, and the request answered worker-lost.
        let lost = fixture.core.tick(now: fixture.t0 + .seconds(2))
        #expect(try errorReply(in: lost.filter { $0.sentToClient != nil }, to: "A", correlation: 4).code == .workerLost)

        // SIGCONT: the same process registers again and is welcomed, no warning, nothing refused.
        let back = fixture.register(Self.edge(0xA, startedAtMs: 1_000), after: .seconds(2))
        #expect(try welcome(in: back) != nil)
        #expect(try superseded(in: back) == nil)
        #expect(warnings(in: back).isEmpty)

        // Its machine still had the request and answers it now: nobody gets that reply.
        let after = try fixture.sendEvent("A", to: "auth", correlation: 5)
        #expect(after.id != before.id, "ids are not reused within a coordinator life")
        #expect(fixture.fromWorker("edge", reply(before.id), after: .seconds(2)) == [])
        #expect(fixture.fromWorker("edge", reply(after.id), after: .seconds(2)) == [.toClient(Array("A".utf8), WireMessage(
            Header(.state, correlation: 5), address: "auth", payload: Self.state))])
    }

    @Test func theSameIncarnationRegisteringWhileStillRegisteredFailsItsRequestsFirst() throws {
        var fixture = CoreFixture()
        _ = fixture.register(Self.edge(0xA, startedAtMs: 1_000))
        let before = try fixture.sendEvent("A", to: "auth", correlation: 4)
        // The worker gave up on the coordinator first (a new socket drops what the old one queued).
        let back = fixture.register(Self.edge(0xA, startedAtMs: 1_000))
        #expect(back.first == .lost(worker: "edge", cause: .registeredAgain, pid: 101))
        #expect(try welcome(in: back) != nil)
        #expect(warnings(in: back).allSatisfy { !$0.contains("two processes share the name") }, "the same process: no warning")
        #expect(fixture.fromWorker("edge", reply(before.id)) == [], "answered worker-lost already")
    }

    // MARK: - Keyed instances reported by a worker

    @Test func reportedInstancesAreListedAtOnceAndStraysAreNot() throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        let keys = (0..<20).map { "k\($0)" }
        let onData1 = keys.filter { CoreFixture.topology.placement(ofMachine: "counter", key: $0) == "data-1" }
        let onData2 = keys.filter { CoreFixture.topology.placement(ofMachine: "counter", key: $0) == "data-2" }
        try #require(!onData1.isEmpty && !onData2.isEmpty)
        let report = InstancesReport(instances: onData1.map { "counter/\($0)" } + ["counter/\(onData2[0])", "auth/x", "sink/y", "nothing/z"])
        let actions = fixture.fromWorker("data-1", WireMessage(Header(.instances), address: "data-1", payload: try WireJSON.encode(report)))

        let counter = try #require(fixture.listing().machines.first { $0.name == "counter" })
        #expect(counter.instances == onData1.map { "counter/\($0)" }.sorted(), "only what the topology places on data-1")
        #expect(warnings(in: actions).count == 1)
        #expect(warnings(in: actions).first?.contains("4 keyed instance(s)") == true, "\(actions)")
    }

    /// An attacker's worker key grew the coordinator to 1.1 GB listing 600,000 reported
    /// instances of 1 KiB: reports are held to the bounds clients are (instances per machine,
    /// address size and form).
    @Test func reportedInstancesAreBoundedAsClientsAre() throws {
        var topology = CoreFixture.topology
        topology.limits.instancesPerMachine = 3
        topology.limits.addressBytes = 64
        var fixture = CoreFixture(topology: topology)
        fixture.registerAll()
        func onData1(_ keys: [String]) -> [String] { keys.filter { topology.placement(ofMachine: "counter", key: $0) == "data-1" } }
        let keys: [String] = onData1((0..<200).map { "k\($0)" })
        try #require(keys.count >= 6)
        let long: String = onData1((0..<400).map { "x\($0)-" + String(repeating: "l", count: 64) })[0]
        let nul: String = onData1((0..<400).map { "q\($0)\u{0}evil" })[0]
        let wellFormed: [String] = keys.prefix(5).map { key in "counter/" + key }
        let report = InstancesReport(instances: wellFormed + ["counter/" + long, "counter/" + nul])
        let actions = fixture.fromWorker("data-1", WireMessage(Header(.instances), address: "data-1", payload: try WireJSON.encode(report)))
        let counter = try #require(fixture.listing().machines.first { $0.name == "counter" })
        #expect(counter.instances == Array(wellFormed.prefix(3)).sorted(), "\(counter.instances)")
        #expect(warnings(in: actions).contains { $0.contains("2 keyed instance(s) past limits.instancesPerMachine") }, "\(actions)")
        #expect(warnings(in: actions).contains { $0.contains("2 keyed instance(s)") && $0.contains("well-formed") }, "\(actions)")
    }

    @Test func reportsAreCutIntoMessagesOfAThousand() {
        let reports = InstancesReport.reports(for: (0..<2500).map { "counter/\($0)" })
        #expect(reports.map(\.instances.count) == [1000, 1000, 500])
        #expect(InstancesReport.reports(for: []).isEmpty)
    }
}
