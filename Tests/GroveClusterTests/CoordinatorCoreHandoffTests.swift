@testable import GroveCluster
@testable import GroveCoordinator
@_spi(GroveInternal) import GroveWire
import Testing

/// Handoff in the coordinator's core (issue 37): a pool worker lost past the grace period has
/// its keyed durable instances placed on the pool's live workers; when it registers again they
/// are released there first, refused meanwhile, then routed home. Times come from the ticks.
@Suite(.timeLimit(.minutes(2))) struct CoordinatorCoreHandoffTests {
    static func topology(handoff: Bool = true, direct: Bool = false) -> Topology {
        Topology(
            name: "handoff",
            coordinator: .init(clients: "inproc://clients", workers: "inproc://workers", events: "inproc://events"),
            workers: [.init(name: "edge"), .init(name: "data", count: 3, direct: direct)],
            machines: [
                .init(name: "auth", type: "AuthFlow", worker: "edge"),
                .init(name: "counter", type: "Counter", worker: "data", keyed: true, durability: .state),
                .init(name: "scratch", type: "Sink", worker: "data", keyed: true),
            ],
            // Silence is not what these tests are about: no worker is lost for it.
            heartbeat: .init(intervalMs: 250, timeoutMs: 600_000),
            durability: .init(postgres: .init(url: "postgres://grove@127.0.0.1:5432/grove"),
                              handoff: handoff ? .init(graceMs: 1000) : nil))
    }

    /// A key of `machine` the topology places on `worker`.
    static func key(on worker: String, of machine: String = "counter", in topology: Topology = topology()) throws -> String {
        try #require((0..<200).map { "k\($0)" }.first { topology.placement(ofMachine: machine, key: $0) == worker })
    }

    static func registration(_ worker: String, direct: Bool = false) -> Registration {
        guard worker != "edge" else { return Registration(worker: worker, pid: 101, machineTypes: ["AuthFlow"], ioHandlers: []) }
        var registration = Registration(worker: worker, pid: 200 + Int32(worker.last!.wholeNumberValue!), machineTypes: ["Counter", "Sink"],
                                        ioHandlers: [])
        if direct { registration.direct = "ipc:///run/grove/unit/direct/\(worker)" }
        return registration
    }

    struct Fixture {
        var core: CoordinatorCore
        let t0 = ContinuousClock.now
        var correlation: UInt64 = 0
        /// Whether the pool's workers register a direct endpoint.
        let direct: Bool

        init(topology: Topology = CoordinatorCoreHandoffTests.topology()) {
            core = CoordinatorCore(topology: topology, eventsEndpoint: "inproc://events")
            direct = topology.workers.contains { $0.direct }
        }

        @discardableResult
        mutating func register(_ name: String, at seconds: Double = 0) -> [CoordinatorAction] {
            let payload = try! WireJSON.encode(CoordinatorCoreHandoffTests.registration(name, direct: direct))
            return core.fromWorker(Array(name.utf8), WireMessage(Header(.register), address: name, payload: payload).frames[...],
                                   now: t0 + .seconds(seconds))
        }

        mutating func tick(at seconds: Double) -> [CoordinatorAction] {
            core.tick(now: t0 + .seconds(seconds))
        }

        /// Where an event for `address` goes: the worker it is forwarded to, or the error code
        /// and message it is refused with.
        mutating func send(to address: String) -> Result<String, WireError> {
            correlation += 1
            let actions = core.fromClient(Array("client".utf8), WireMessage(Header(.event, correlation: correlation), address: address,
                                                                            payload: Array(#"{"go":{}}"#.utf8)).frames[...])
            for action in actions {
                switch action {
                case .toWorker(let worker, let message) where message.header.kind == .event:
                    // Answered, so the worker's queue does not fill.
                    _ = core.fromWorker(Array(worker.utf8), WireMessage(Header(.state, correlation: message.header.correlation),
                                                                        address: address, payload: Array("{}".utf8)).frames[...],
                                        now: t0)
                    return .success(worker)
                case .toClient(_, let message) where message.header.kind == .error:
                    return .failure((try? WireJSON.decode(WireError.self, from: message.payload)) ?? WireError(.malformedFrame, "?"))
                default:
                    continue
                }
            }
            return .failure(WireError(.malformedFrame, "no answer in \(actions)"))
        }

        mutating func released(_ addresses: [String], homes: [String]? = nil, by worker: String) -> [CoordinatorAction] {
            let payload = try! WireJSON.encode(HandoffRelease(addresses: addresses, homes: homes))
            return core.fromWorker(Array(worker.utf8), WireMessage(Header(.release), address: worker, payload: payload).frames[...],
                                   now: t0)
        }
    }

    static func releases(in actions: [CoordinatorAction], kind: MessageKind = .release) -> [String: [String]] {
        var found: [String: [String]] = [:]
        for case .toWorker(let worker, let message) in actions where message.header.kind == kind {
            found[worker, default: []] += (try? WireJSON.decode(HandoffRelease.self, from: message.payload).addresses) ?? []
        }
        return found
    }

    @Test func instancesOfALostWorkerMoveOnlyOnceTheGracePeriodIsOver() throws {
        var fixture = Fixture()
        for name in ["edge", "data-1", "data-2", "data-3"] { fixture.register(name) }
        let key = try Self.key(on: "data-1")
        #expect(try fixture.send(to: "counter/\(key)").get() == "data-1")

        _ = fixture.core.lose("data-1", reason: "killed", cause: .exited)
        _ = fixture.tick(at: 0.1)  // the grace starts here
        #expect(fixture.send(to: "counter/\(key)").failureCode == .unavailable)
        #expect(fixture.tick(at: 1.05).isEmpty == false)  // heartbeats only
        #expect(fixture.send(to: "counter/\(key)").failureCode == .unavailable)

        let over = fixture.tick(at: 1.1)
        #expect(over.contains { if case .warn(let text) = $0 { text.contains("worker data-1 was lost for more than") } else { false } })
        let interim = try #require(Self.topology().placement(ofKey: key, among: ["data-2", "data-3"]))
        #expect(try fixture.send(to: "counter/\(key)").get() == interim)
        // The same choice every time, and the other workers' own instances stay where they are.
        #expect(try fixture.send(to: "counter/\(key)").get() == interim)
        let own = try Self.key(on: "data-2")
        #expect(try fixture.send(to: "counter/\(own)").get() == "data-2")
        // A machine that keeps nothing (durability none) has no state to move: it waits.
        let scratch = try Self.key(on: "data-1", of: "scratch")
        #expect(fixture.send(to: "scratch/\(scratch)").failureCode == .unavailable)
    }

    @Test func aWorkerBackWithinTheGracePeriodKeepsItsInstances() throws {
        var fixture = Fixture()
        for name in ["edge", "data-1", "data-2", "data-3"] { fixture.register(name) }
        let key = try Self.key(on: "data-1")
        _ = fixture.core.lose("data-1", reason: "killed", cause: .exited)
        _ = fixture.tick(at: 0.1)
        let back = fixture.register("data-1", at: 0.5)
        #expect(Self.releases(in: back).isEmpty)
        _ = fixture.tick(at: 5)
        #expect(try fixture.send(to: "counter/\(key)").get() == "data-1")
    }

    /// A pool of three with a key of data-1's adopted by another worker (`interim`), data-1
    /// lost past the grace.
    static func adoptedWhileDataOneIsLost() throws -> (fixture: Fixture, address: String, interim: String) {
        var fixture = Fixture()
        for name in ["edge", "data-1", "data-2", "data-3"] { fixture.register(name) }
        let address = "counter/\(try Self.key(on: "data-1"))"
        _ = fixture.core.lose("data-1", reason: "killed", cause: .exited)
        _ = fixture.tick(at: 0.1)
        _ = fixture.tick(at: 1.2)
        let interim = try fixture.send(to: address).get()
        return (fixture, address, interim)
    }

    @Test func aReturningWorkerGetsItsInstancesBackOnlyAfterTheyAreReleased() throws {
        let adopted = try Self.adoptedWhileDataOneIsLost()
        var fixture = adopted.fixture
        let (address, interim) = (adopted.address, adopted.interim)

        let back = fixture.register("data-1", at: 2)
        #expect(Self.releases(in: back) == [interim: [address]])
        let held = fixture.send(to: address)
        #expect(held.failureCode == .unavailable)
        #expect(held.failureMessage.contains("being handed back from worker \(interim)"))

        // Only the worker asked may answer; another's word frees nothing.
        let other = interim == "data-2" ? "data-3" : "data-2"
        #expect(Self.releases(in: fixture.released([address], by: other), kind: .returned).isEmpty)
        #expect(fixture.send(to: address).failureCode == .unavailable)

        // Released, it goes home, and its own worker is told, to take it back if it has work due.
        #expect(Self.releases(in: fixture.released([address], by: interim), kind: .returned) == ["data-1": [address]])
        #expect(try fixture.send(to: address).get() == "data-1")
    }

    @Test func aReleasingWorkerThatIsLostFreesWhatItReleased() throws {
        let adopted = try Self.adoptedWhileDataOneIsLost()
        var fixture = adopted.fixture
        let (address, interim) = (adopted.address, adopted.interim)
        _ = fixture.register("data-1", at: 2)
        #expect(fixture.send(to: address).failureCode == .unavailable)
        // Lost, it holds nothing live; the store fences whatever it still writes. Its own
        // worker is told it has it back.
        let lost = fixture.core.lose(interim, reason: "killed", cause: .exited)
        #expect(Self.releases(in: lost, kind: .returned) == ["data-1": [address]])
        #expect(try fixture.send(to: address).get() == "data-1")
    }

    @Test func aWorkerBackAfterItsAdopterWasLostGetsItsInstancesReturnedAtOnce() throws {
        let adopted = try Self.adoptedWhileDataOneIsLost()
        var fixture = adopted.fixture
        let (address, interim) = (adopted.address, adopted.interim)
        _ = fixture.core.lose(interim, reason: "killed", cause: .exited)
        // Nothing live anywhere to release: back home at once, told so in the same turn.
        let back = fixture.register("data-1", at: 2)
        #expect(Self.releases(in: back).isEmpty)
        #expect(Self.releases(in: back, kind: .returned) == ["data-1": [address]])
        #expect(try fixture.send(to: address).get() == "data-1")
    }

    @Test func aPoolWithEveryWorkerHandedOffWaitsForItsOwn() throws {
        var fixture = Fixture()
        for name in ["edge", "data-1", "data-2", "data-3"] { fixture.register(name) }
        let address = "counter/\(try Self.key(on: "data-1"))"
        for name in ["data-1", "data-2", "data-3"] { _ = fixture.core.lose(name, reason: "killed", cause: .exited) }
        _ = fixture.tick(at: 0.1)
        let over = fixture.tick(at: 1.2)
        #expect(over.contains { if case .warn(let text) = $0 { text.contains("every worker of group 'data' is lost") } else { false } })
        #expect(fixture.send(to: address).failureCode == .unavailable)
    }

    @Test func withoutHandoffALostWorkersInstancesWait() throws {
        let topology = Self.topology(handoff: false)
        var fixture = Fixture(topology: topology)
        for name in ["edge", "data-1", "data-2", "data-3"] { fixture.register(name) }
        let address = "counter/\(try Self.key(on: "data-1", in: topology))"
        _ = fixture.core.lose("data-1", reason: "killed", cause: .exited)
        _ = fixture.tick(at: 0.1)
        _ = fixture.tick(at: 100)
        #expect(fixture.send(to: address).failureCode == .unavailable)
    }

    /// The releases in `actions` as sent, by worker, in order.
    static func releaseMessages(in actions: [CoordinatorAction]) -> [String: [HandoffRelease]] {
        var found: [String: [HandoffRelease]] = [:]
        for case .toWorker(let worker, let message) in actions where message.header.kind == .release {
            if let release = try? WireJSON.decode(HandoffRelease.self, from: message.payload) { found[worker, default: []].append(release) }
        }
        return found
    }

    /// Whether worker `worker` may publish a state of `address` now.
    static func publishes(_ fixture: inout Fixture, _ address: String, from worker: String) throws -> Bool {
        let change = try WireJSON.encode(StateChange(address: address, worker: worker, state: .object([:])))
        let actions = fixture.core.fromWorker(Array(worker.utf8), WireMessage(Header(.stateChanged), address: address, payload: change).frames[...],
                                              now: fixture.t0)
        return actions.contains { if case .publish(let topic, _) = $0 { topic == "state:" + address } else { false } }
    }

    /// A direct pool of three with data-1 lost past the grace, and an address of data-1's.
    static func directPoolWithDataOneHandedOff() throws -> (fixture: Fixture, address: String) {
        var fixture = Fixture(topology: Self.topology(direct: true))
        for name in ["edge", "data-1", "data-2", "data-3"] { fixture.register(name) }
        let address = "counter/\(try Self.key(on: "data-1"))"
        _ = fixture.core.lose("data-1", reason: "killed", cause: .exited)
        _ = fixture.tick(at: 0.1)
        _ = fixture.tick(at: 1.2)
        return (fixture, address)
    }

    /// A direct pool: a client may have had a key of data-1's adopted without the coordinator
    /// routing it, so each other worker is told to release all of data-1's, and the keys stay
    /// placed on their adopter (its states published, clients refused) until it answered.
    @Test func aDirectPoolReleasesEveryInstanceOfTheReturningWorker() throws {
        let handedOff = try Self.directPoolWithDataOneHandedOff()
        var fixture = handedOff.fixture
        let address = handedOff.address
        let adopter = try #require(Self.topology().placement(ofKey: String(address.dropFirst("counter/".count)), among: ["data-2", "data-3"]))
        let other = adopter == "data-2" ? "data-3" : "data-2"
        // No request for it went through the coordinator: it knows of no adoption.
        #expect(try Self.publishes(&fixture, address, from: adopter))

        let back = fixture.register("data-1", at: 2)
        let releases = Self.releaseMessages(in: back)
        #expect(releases[adopter] == [HandoffRelease(addresses: [], homes: ["data-1"])])
        #expect(releases[other] == [HandoffRelease(addresses: [], homes: ["data-1"])])
        // The placement reaches each worker before its release.
        let kinds = back.compactMap { action -> MessageKind? in
            if case .toWorker(adopter, let message) = action, [.placement, .release].contains(message.header.kind) { message.header.kind } else { nil }
        }
        #expect(kinds == [.placement, .release])
        #expect(fixture.send(to: address).failureMessage.contains("being handed back to its own worker data-1"))
        #expect(try Self.publishes(&fixture, address, from: adopter), "still the adopter's until it let go")
        #expect(try !Self.publishes(&fixture, address, from: "data-1"))
        // Its report of the instances it kept is its own worker's, not a stray's.
        let report = try WireJSON.encode(InstancesReport(instances: [address]))
        let reported = fixture.core.fromWorker(Array("data-1".utf8), WireMessage(Header(.instances), address: "data-1", payload: report).frames[...],
                                               now: fixture.t0)
        #expect(!reported.contains { if case .toWorker(_, let message) = $0 { message.header.kind == .error } else { false } }, "\(reported)")

        // One answer is not enough; what the adopter names goes home with its answer.
        #expect(Self.releases(in: fixture.released([], homes: ["data-1"], by: other), kind: .returned).isEmpty)
        #expect(fixture.send(to: address).failureCode == .unavailable)
        let answered = fixture.released([address], homes: ["data-1"], by: adopter)
        #expect(Self.releases(in: answered, kind: .returned) == ["data-1": [address]])
        #expect(try fixture.send(to: address).get() == "data-1")
        #expect(try !Self.publishes(&fixture, address, from: adopter))
    }

    @Test func aDirectAdopterLostWhileReleasingHoldsNothingBack() throws {
        let handedOff = try Self.directPoolWithDataOneHandedOff()
        var fixture = handedOff.fixture
        let address = handedOff.address
        _ = fixture.register("data-1", at: 2)
        _ = fixture.core.lose("data-2", reason: "killed", cause: .exited)
        #expect(fixture.send(to: address).failureCode == .unavailable)
        _ = fixture.released([], homes: ["data-1"], by: "data-3")
        #expect(try fixture.send(to: address).get() == "data-1")
    }

    /// A worker that never answers with `homes` (an earlier build) holds its pool-mate's keys
    /// back only so long: then they go home, and the store fences what it still has.
    @Test func aReleaseByHomeNeverAnsweredEndsAfterItsLimit() throws {
        let handedOff = try Self.directPoolWithDataOneHandedOff()
        var fixture = handedOff.fixture
        _ = fixture.register("data-1", at: 2)
        _ = fixture.tick(at: 2.1)
        #expect(fixture.send(to: handedOff.address).failureCode == .unavailable)
        let limit = Double(fixture.core.homesBackLimit.components.seconds)
        // One tick that late is taken for the coordinator's own pause: no worker is lost for it.
        let expired = fixture.tick(at: 2.1 + limit + 0.5)
        #expect(expired.contains { if case .warn(let text) = $0 { text.contains("did not answer the release of worker data-1") } else { false } })
        #expect(try fixture.send(to: handedOff.address).get() == "data-1")
    }

    @Test func releasePagesCarryTheHomesLast() {
        let addresses = (0..<(HandoffRelease.pageSize + 3)).map { "counter/k\($0)" }
        let pages = HandoffRelease.pages(of: addresses, homes: ["data-1"])
        #expect(pages.map(\.addresses.count) == [HandoffRelease.pageSize, 3])
        #expect(pages.map(\.homes) == [nil, ["data-1"]])
        #expect(HandoffRelease.pages(of: [], homes: ["data-1"]) == [HandoffRelease(addresses: [], homes: ["data-1"])])
        #expect(HandoffRelease.pages(of: []).isEmpty)
    }

    @Test func anAdoptingWorkerSpeaksForWhatItAdopted() throws {
        let adopted = try Self.adoptedWhileDataOneIsLost()
        var fixture = adopted.fixture
        let (address, interim) = (adopted.address, adopted.interim)
        let change = try WireJSON.encode(StateChange(address: address, worker: interim, state: .object([:])))
        let actions = fixture.core.fromWorker(Array(interim.utf8), WireMessage(Header(.stateChanged), address: address, payload: change).frames[...],
                                              now: fixture.t0)
        #expect(actions.contains { if case .publish(let topic, _) = $0 { topic == "state:" + address } else { false } })
    }
}

extension Result where Success == String, Failure == WireError {
    var failureCode: WireError.Code? {
        if case .failure(let error) = self { error.code } else { nil }
    }

    var failureMessage: String {
        if case .failure(let error) = self { error.message } else { "" }
    }
}
