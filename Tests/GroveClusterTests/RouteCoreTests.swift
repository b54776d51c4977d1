import GroveClient
@testable import GroveCluster
import GroveWire
import Testing

/// The client's choice of road (docs/DIRECT-ROUTES.md, section 3): direct to a machine's worker
/// once located, the coordinator otherwise; what each `moved` reason and a silent worker lead to.
/// No socket, no clock (instants are given).
@Suite("Route core", .timeLimit(.minutes(2)))
struct RouteCoreTests {
    static let pool = ["data-1", "data-2", "data-3"]
    static let topology = Topology(
        name: "unit",
        coordinator: .init(clients: "inproc://clients", workers: "inproc://workers", events: "inproc://events"),
        workers: [.init(name: "data", count: 3)],
        machines: [.init(name: "counter", type: "Counter", worker: "data", keyed: true),
                   .init(name: "sink", type: "Sink", worker: "data")]
    )

    static func worker(_ name: String, _ state: Location.Worker.State = .registered, incarnation: UInt64 = 7) -> Location.Worker {
        guard state == .registered else { return Location.Worker(name: name, state: state) }
        return Location.Worker(name: name, state: state, endpoint: "ipc:///run/unit/direct/\(name).\(incarnation)",
                               serverKey: "key-of-\(name)", incarnation: incarnation)
    }

    static func counter(generation: Int = 1, states: [Location.Worker.State] = [.registered, .registered, .registered],
                        handingBack: [String] = []) -> Location {
        Location(machine: "counter", keyed: true, generation: generation, heartbeatMs: 1500,
                 workers: zip(pool, states).map { worker($0, $1) }, handingBack: handingBack)
    }

    static func target(_ decision: RouteCore.Decision) -> RouteCore.Target? {
        guard case .direct(let target) = decision else { return nil }
        return target
    }

    @Test func aMachineNotLocatedYetIsLocatedFirst() {
        let core = RouteCore()
        #expect(core.route("counter/7") == .locate(machine: "counter"))
        #expect(core.route("sink") == .locate(machine: "sink"))
    }

    /// The client's hash is the coordinator's: for 10,000 keys the worker it sends to is the one
    /// the topology places the key on.
    @Test func eachKeyGoesToTheWorkerTheTopologyPlacesItOn() throws {
        var core = RouteCore()
        core.located(Self.counter())
        for n in 0..<10_000 {
            let key = "k-\(n)-\(n &* 7919)"
            let target = try #require(Self.target(core.route("counter/\(key)")))
            #expect(target.worker == Self.topology.placement(ofMachine: "counter", key: key))
            #expect(target.endpoint == "ipc:///run/unit/direct/\(target.worker).7" && target.serverKey == "key-of-\(target.worker)")
        }
    }

    /// A handed-off worker's keys go to the one among the others the same hash picks, as the
    /// coordinator routes them; the others stay home.
    @Test func aHandedOffWorkersKeysGoWhereTheCoordinatorPlacesThem() throws {
        var core = RouteCore()
        core.located(Self.counter(states: [.registered, .handedOff, .registered]))
        let live = ["data-1", "data-3"]
        for n in 0..<3_000 {
            let key = "h-\(n)"
            let home = try #require(Self.topology.placement(ofKey: key, among: Self.pool))
            let expected = home == "data-2" ? Self.topology.placement(ofKey: key, among: live) : home
            #expect(Self.target(core.route("counter/\(key)"))?.worker == expected)
        }
    }

    @Test func aWorkerNotRegisteredOrWithoutDirectIsReachedThroughTheCoordinator() throws {
        var core = RouteCore()
        core.located(Self.counter(states: [.lost, .noDirect, .registered]))
        for n in 0..<500 {
            let key = "x-\(n)"
            let home = try #require(Self.topology.placement(ofKey: key, among: Self.pool))
            let decision = core.route("counter/\(key)")
            if home == "data-3" {
                #expect(Self.target(decision)?.worker == "data-3")
            } else {
                #expect(decision == .coordinator)
            }
        }
    }

    /// While a home takes its instances back, its keys go by the coordinator (which answers the
    /// releasing ones `unavailable`); the other homes' keys stay direct.
    @Test func keysHomedOnAWorkerTakingItsInstancesBackGoThroughTheCoordinator() throws {
        var core = RouteCore()
        core.located(Self.counter(handingBack: ["data-1"]))
        for n in 0..<500 {
            let key = "b-\(n)"
            let home = try #require(Self.topology.placement(ofKey: key, among: Self.pool))
            let decision = core.route("counter/\(key)")
            #expect(home == "data-1" ? decision == .coordinator : Self.target(decision)?.worker == home)
        }
    }

    /// A key whose worker is `lost` (a kill, a pause: the grace has not run out) goes by the
    /// coordinator for now; the location is asked again once older than its `heartbeatMs`, so
    /// that once the worker is handed off the key goes straight to the adopter, and once it is
    /// back, home: the coordinator road itself never says either.
    @Test func aLocationThatSendsAKeyToTheCoordinatorForNowIsAskedAgainAfterItsHeartbeat() throws {
        var core = RouteCore()
        let start = ContinuousClock.now
        let key = try #require((0..<100).map { "k\($0)" }.first { Self.topology.placement(ofKey: $0, among: Self.pool) == "data-1" })
        let address = "counter/\(key)"
        core.located(Self.counter(generation: 2, states: [.lost, .registered, .registered]), at: start)
        #expect(core.route(address, now: start + .milliseconds(1499)) == .coordinator)
        #expect(core.route(address, now: start + .milliseconds(1500)) == .locate(machine: "counter"))
        #expect(core.route(address) == .coordinator, "without an instant, never stale")
        // Handed off: straight to where the coordinator places it among the live.
        let adopted = start + .seconds(2)
        core.located(Self.counter(generation: 3, states: [.handedOff, .registered, .registered]), at: adopted)
        let adopter = try #require(Self.topology.placement(ofKey: key, among: ["data-2", "data-3"]))
        #expect(Self.target(core.route(address, now: adopted + .seconds(60)))?.worker == adopter, "a direct road is never stale")
        // Back, taking its instances home: by the coordinator for now, then home.
        let back = start + .seconds(10)
        core.located(Self.counter(generation: 4, handingBack: ["data-1"]), at: back)
        #expect(core.route(address, now: back + .milliseconds(10)) == .coordinator)
        #expect(core.route(address, now: back + .milliseconds(1500)) == .locate(machine: "counter"))
        core.located(Self.counter(generation: 5), at: back + .milliseconds(1500))
        #expect(Self.target(core.route(address, now: back + .milliseconds(1500)))?.worker == "data-1")
    }

    /// What the coordinator answers for good is not asked again: a worker without a direct
    /// endpoint, a keyed machine without a key.
    @Test func aLocationThatSendsAnAddressToTheCoordinatorForGoodIsKept() throws {
        var core = RouteCore()
        let start = ContinuousClock.now
        core.located(Self.counter(states: [.noDirect, .noDirect, .noDirect]), at: start)
        #expect(core.route("counter/a", now: start + .seconds(60)) == .coordinator)
        #expect(core.route("counter", now: start + .seconds(60)) == .coordinator)
    }

    @Test func aSingleMachineLivesOnItsOneWorkerAndMalformedAddressesGoToTheCoordinator() {
        var core = RouteCore()
        core.located(Location(machine: "sink", keyed: false, generation: 1, heartbeatMs: 1500, workers: [Self.worker("data-1")]))
        core.located(Self.counter())
        #expect(Self.target(core.route("sink"))?.worker == "data-1")
        // The coordinator answers these with its own errors.
        #expect(core.route("sink/3") == .coordinator)
        #expect(core.route("counter") == .coordinator)
        #expect(core.route("counter/") == .coordinator)
    }

    /// `not-here`: the address goes by the coordinator until a location newer than the one that
    /// sent it to the wrong worker; the machine is located again.
    @Test func notHereHoldsTheAddressToTheCoordinatorUntilANewerLocation() {
        var core = RouteCore()
        core.located(Self.counter(generation: 4))
        let moved = WireError(.moved, "not here", address: "counter/9", reason: .notHere)
        #expect(core.moved(moved, address: "counter/9") == .resend(after: .zero))
        #expect(core.route("counter/9") == .locate(machine: "counter"))
        core.located(Self.counter(generation: 4))
        #expect(core.route("counter/9") == .coordinator)
        #expect(Self.target(core.route("counter/10")) != nil)
        core.located(Self.counter(generation: 5))
        #expect(Self.target(core.route("counter/9")) != nil)
        #expect(core.overrides.isEmpty)
    }

    @Test func notSpawnedSendsThatOneRequestThroughTheCoordinator() {
        var core = RouteCore()
        core.located(Self.counter())
        let moved = WireError(.moved, "first event", address: "counter/new", reason: .notSpawned)
        #expect(core.moved(moved, address: "counter/new") == .resendByCoordinator)
        #expect(Self.target(core.route("counter/new")) != nil)  // then direct again
    }

    @Test func theOtherReasonsLocateAgainAndNotRegisteredPausesFirst() {
        for (reason, pause) in [(WireError.Reason.notRegistered, RouteCore.notRegisteredPause), (.notCommitted, .zero),
                                (.stopping, .zero), (WireError.Reason(rawValue: "a-newer-reason"), .zero)] {
            var core = RouteCore()
            core.located(Self.counter())
            let moved = WireError(.moved, "moved", address: "counter/1", reason: reason)
            #expect(core.moved(moved, address: "counter/1") == .resend(after: pause), "\(reason.rawValue)")
            #expect(core.route("counter/1") == .locate(machine: "counter"), "\(reason.rawValue)")
            #expect(core.overrides.isEmpty)
        }
    }

    /// Silence: locate again; the same incarnation at the same endpoint means keep waiting,
    /// another one (or none registered) means the request was lost with the old process.
    @Test func silenceLocatesAgainAndIsWorkerLostOnlyWhenTheWorkerChanged() throws {
        var core = RouteCore()
        core.located(Self.counter())
        let target = try #require(Self.target(core.route("counter/1")))
        core.silence(on: target, machine: "counter")
        #expect(core.route("counter/1") == .locate(machine: "counter"))
        #expect(RouteCore.judgeSilence(of: target, in: Self.counter()) == .keepWaiting)
        var restarted = Self.counter(generation: 2)
        restarted.workers = restarted.workers.map { $0.name == target.worker ? Self.worker($0.name, incarnation: 8) : $0 }
        guard case .lost(let error) = RouteCore.judgeSilence(of: target, in: restarted) else {
            Issue.record("a restarted worker's silence should be worker-lost")
            return
        }
        #expect(error.code == .workerLost)
        #expect(error.message.contains("no answer from worker \(target.worker) (incarnation 7)"))
        var lost = Self.counter(generation: 2)
        lost.workers = lost.workers.map { $0.name == target.worker ? Self.worker($0.name, .lost) : $0 }
        #expect(RouteCore.judgeSilence(of: target, in: lost) != .keepWaiting)
    }

    /// An older coordinator answers `locate` `unknown-kind`: the coordinator road for good. A
    /// refused `locate` (a key without a role there, an unknown machine) sends that machine's
    /// requests to the coordinator, which answers each with its own error.
    @Test func aRefusedLocateSendsRequestsToTheCoordinator() {
        var core = RouteCore()
        core.locateFailed(machine: "auth", code: .forbidden)
        #expect(core.route("auth") == .coordinator)
        #expect(core.route("counter/1") == .locate(machine: "counter"))
        core.locateFailed(machine: "counter", code: .unknownKind)
        #expect(core.coordinatorOnly)
        core.located(Self.counter())
        #expect(core.route("counter/1") == .coordinator)
    }

    @Test func anOlderLocationDoesNotReplaceANewerOne() {
        var core = RouteCore()
        core.located(Self.counter(generation: 5))
        core.located(Self.counter(generation: 3, states: [.lost, .lost, .lost]))
        #expect(core.locations["counter"]??.generation == 5)
    }

    @Test func theLocationsKeptAreBounded() {
        var core = RouteCore()
        for n in 0...RouteCore.maximumMachines {
            core.located(Location(machine: "m\(n)", keyed: false, generation: 1, heartbeatMs: 1500, workers: [Self.worker("data-1")]))
        }
        #expect(core.locations.count <= RouteCore.maximumMachines)
        #expect(core.locations["m\(RouteCore.maximumMachines)"] != nil)
    }
}
