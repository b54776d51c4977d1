import Foundation
@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
@_spi(GroveInternal) import GroveWire
import Testing

/// The coordinator's part in machines that end: an admin's `restart` goes to the machine's
/// worker; an instance whose machine removes it when it ends is no longer listed.
@Suite("CoordinatorCore: onEnd and restart", .timeLimit(.minutes(2)))
struct CoordinatorCoreLifecycleTests {
    /// The unit topology with `counter` (keyed) removing its ended instances and `auth`
    /// restarting.
    static func fixture() -> CoreFixture {
        var topology = CoreFixture.topology
        for index in topology.machines.indices {
            switch topology.machines[index].name {
            case "counter": topology.machines[index].onEnd = .remove
            case "auth": topology.machines[index].onEnd = .restart
            default: break
            }
        }
        var fixture = CoreFixture(topology: topology)
        fixture.registerAll()
        return fixture
    }

    func instances(_ fixture: CoreFixture, of machine: String) -> [String] {
        fixture.listing().machines.first { $0.name == machine }?.instances ?? []
    }

    /// Each welcomed machine's `onEnd`. (A helper: no closure inside `#expect`.)
    func policyByName(_ welcome: Welcome) -> [String: EndPolicy?] {
        Dictionary(welcome.machines.map { ($0.name, $0.onEnd) }, uniquingKeysWith: { first, _ in first })
    }

    func ended(_ address: String, reason: MachineEnded.Reason = .terminalState) -> WireMessage {
        let payload = try! WireJSON.encode(MachineEnded(address: address, worker: "data-1", reason: reason, state: .null))
        return WireMessage(Header(.machine), address: address, payload: payload)
    }

    @Test func theWelcomeCarriesEachMachinesPolicy() throws {
        var fixture = CoreFixture(topology: Self.fixture().core.topology)
        let edge = fixture.register("edge").compactMap(\.sentToWorker).first { $0.message.header.kind == .welcome }
        let policies = policyByName(try payload(Welcome.self, of: try #require(edge).message))
        #expect(policies["auth"] == .some(.restart))
        #expect(policies["loader"] == .some(nil), "stay is the default, left out")
        let data = fixture.register("data-1").compactMap(\.sentToWorker).first { $0.message.header.kind == .welcome }
        #expect(policyByName(try payload(Welcome.self, of: try #require(data).message))["counter"] == .some(.remove))
    }

    @Test func theWelcomeCarriesRestartSettingsOnlyWhenTheyAreNotTheDefaults() throws {
        var topology = Self.fixture().core.topology
        let tuned = RestartPolicy(intensity: 2, periodMs: 3000, backoff: .init(initialMs: 50, maxMs: 400))
        for index in topology.machines.indices where topology.machines[index].name == "auth" {
            topology.machines[index].restart = tuned
        }
        var fixture = CoreFixture(topology: topology)
        let edge = fixture.register("edge").compactMap(\.sentToWorker).first { $0.message.header.kind == .welcome }
        let machines = try payload(Welcome.self, of: try #require(edge).message).machines
        let settings = Dictionary(machines.map { ($0.name, $0.restart) }, uniquingKeysWith: { first, _ in first })
        #expect(settings["auth"] == .some(tuned))
        #expect(settings["loader"] == .some(nil), "stays: nothing to restart")
        // The defaults are left out: the welcome of a coordinator that predates the setting.
        var plain = CoreFixture(topology: Self.fixture().core.topology)
        let welcome = plain.register("edge").compactMap(\.sentToWorker).first { $0.message.header.kind == .welcome }
        let text = String(decoding: try #require(welcome).message.payload, as: UTF8.self)
        #expect(text.contains(#""onEnd":"restart""#), "\(text)")
        #expect(!text.contains(#""restart":{"#), "\(text)")
    }

    @Test func anEndedInstanceItsMachineRemovesIsNoLongerListedUntilItsNextEvent() throws {
        var fixture = Self.fixture()
        let (worker, _) = try fixture.sendEvent("A", to: "counter/s-1", correlation: 1)
        _ = try fixture.sendEvent("A", to: "counter/s-2", correlation: 2)
        #expect(instances(fixture, of: "counter") == ["counter/s-1", "counter/s-2"])

        let actions = fixture.fromWorker(worker, ended("counter/s-1"))
        let published = try #require(actions.compactMap(\.published).first)
        #expect(published.topic == "machine:counter/s-1", "still published for watchers")
        #expect(instances(fixture, of: "counter") == ["counter/s-2"])

        // The key's next event starts a new instance: listed again (not taken for listed by the
        // address the coordinator resolved before).
        _ = try fixture.sendEvent("A", to: "counter/s-1", correlation: 3)
        #expect(instances(fixture, of: "counter") == ["counter/s-1", "counter/s-2"])
    }

    @Test func aRemovedInstancesStateLeavesTheSnapshots() throws {
        var fixture = Self.fixture()
        let (worker, _) = try fixture.sendEvent("A", to: "counter/s-1", correlation: 1)
        _ = try fixture.sendEvent("A", to: "counter/s-2", correlation: 2)
        for address in ["counter/s-1", "counter/s-2"] {
            _ = fixture.core.publications.numbered(PublicationLogTests.change(address, 1), topic: "state:" + address)
        }
        _ = fixture.fromWorker(worker, ended("counter/s-1"))
        let snapshot = try WireJSON.decode(StateSnapshot.self, from: fixture.core.publications.snapshot(prefixes: ["state:counter/"]))
        #expect(snapshot.states.map(\.topic) == ["state:counter/s-2"], "a removed instance has no state to resync to")
    }

    @Test func anEndedInstanceThatStaysOrRestartsStaysListed() throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        let (worker, _) = try fixture.sendEvent("A", to: "counter/s-1", correlation: 1)
        _ = fixture.fromWorker(worker, ended("counter/s-1", reason: .stopped))
        #expect(instances(fixture, of: "counter") == ["counter/s-1"], "onEnd stay: the ended instance is still there")
    }

    @Test func restartGoesToTheMachinesWorkerWithoutListingAnInstance() throws {
        var fixture = Self.fixture()
        let actions = fixture.fromClient("A", WireMessage(Header(.restart, correlation: 4), address: "auth"))
        let forwarded = try #require(actions.first?.sentToWorker)
        #expect(forwarded.worker == "edge")
        #expect(forwarded.message.header.kind == .restart)
        #expect(forwarded.message.address == "auth")
        _ = fixture.fromClient("A", WireMessage(Header(.restart, correlation: 5), address: "counter/never"))
        #expect(instances(fixture, of: "counter").isEmpty, "a restart spawns nothing")
    }

    @Test func restartNeedsTheAdminRole() throws {
        var fixture = Self.fixture()
        let message = WireMessage(Header(.restart, correlation: 9), address: "counter/7")
        func decide(_ principal: Gatekeeper.Principal) -> ClientDecision {
            MessageView.with(message) { fixture.core.decide(client: Array("c".utf8), $0, as: principal) }
        }
        for principal in [CoordinatorCoreAccessTests.reader, CoordinatorCoreAccessTests.sender] {
            guard case .act(let actions) = decide(principal), let reply = actions.first?.sentToClient else {
                Issue.record("a restart without the admin role should be refused")
                continue
            }
            let error = try payload(WireError.self, of: reply.message)
            #expect(error.code == .forbidden)
            #expect(error.message.contains("a restart needs the admin role on counter/7"), "\(error.message)")
        }
        guard case .forward = decide(CoordinatorCoreAccessTests.admin) else {
            Issue.record("an admin's restart should be forwarded")
            return
        }
    }
}
