import Foundation
@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
@_spi(GroveInternal) import GroveWire
import Testing

/// `machines[].durability` and the top-level `durability` section: read with their defaults,
/// refused with exact paths, resolved to a data directory, and carried to workers in the welcome.
@Suite("Topology durability", .timeLimit(.minutes(2)))
struct TopologyDurabilityTests {
    static func json(machine: String = "", _ extra: String = "") -> String {
        """
        {
          "name": "orders",
          "coordinator": { "clients": "ipc:///run/o/clients", "workers": "ipc:///run/o/workers", "events": "ipc:///run/o/events" },
          "workers": [ { "name": "main" }, { "name": "io" } ],
          "machines": [
            { "name": "auth", "type": "AuthFlow", "worker": "main"\(machine) },
            { "name": "counter", "type": "Counter", "worker": "io", "keyed": true, "durability": "state" }
          ]\(extra.isEmpty ? "" : ",\n  " + extra)
        }
        """
    }

    static func load(_ json: String) throws(TopologyError) -> Topology {
        try Topology(json: Data(json.utf8), source: "orders.json")
    }

    static func issues(_ json: String) -> [String] {
        do {
            _ = try load(json)
            Issue.record("expected the topology to be refused")
            return []
        } catch {
            return error.issues.map { "\($0.code) \($0.path): \($0.message)" }
        }
    }

    @Test func absentMeansNoneAndTheDefaults() throws {
        let topology = try Self.load(Self.json())
        #expect(topology.machines.map(\.durability) == [.none, .state])
        #expect(topology.durability == Topology.DurabilitySettings())
        #expect(topology.durability.snapshotEvery == 1000 && topology.durability.flush == .process)
        #expect(topology.durability.directory == nil)
        #expect(topology.hasDurableMachines)
    }

    @Test func everyKeyIsRead() throws {
        let topology = try Self.load(Self.json(
            machine: #", "durability": "state""#,
            #""durability": { "directory": "../var/grove", "snapshotEvery": 1000000, "flush": "disk" }"#))
        #expect(topology.machines.map(\.durability) == [.state, .state])
        #expect(topology.durability == .init(directory: "../var/grove", snapshotEvery: 1_000_000, flush: .disk))
    }

    @Test func journalIsReadWithItsSnapshotInterval() throws {
        let topology = try Self.load(Self.json(machine: #", "durability": "journal""#, #""durability": { "snapshotEvery": 50 }"#))
        #expect(topology.machines.map(\.durability) == [.journal, .state])
        #expect(topology.durability.snapshotEvery == 50)
        #expect(topology.hasDurableMachines)
    }

    @Test func mistakesAreRefusedWithTheirPathsAndWhatToWrite() {
        let found = Self.issues(Self.json(
            machine: #", "durability": "journaled""#,
            #""durability": { "dir": "x", "snapshotEvery": 0, "flush": "dsik" }"#))
        let paths = found.map { String($0.prefix { $0 != ":" }) }
        // In the format's order: the machines, then the durability section (its unknown keys first).
        #expect(paths == [
            "invalid-value $.machines[0].durability", "unknown-key $.durability.dir",
            "invalid-value $.durability.snapshotEvery", "invalid-value $.durability.flush",
        ], "\(found)")
        #expect(found.contains { $0.contains("$.durability.dir: unknown key 'dir'; did you mean 'directory'?") }, "\(found)")
        #expect(found.contains { $0.contains("did you mean 'journal'?") && $0.contains("\"state\"") }, "\(found)")
        #expect(found.contains { $0.contains("did you mean 'disk'?") }, "\(found)")
        #expect(found.contains { $0.contains("snapshotEvery must be at least 1") }, "\(found)")
    }

    @Test(arguments: [
        (#""snapshotEvery": 1000001"#, "snapshotEvery must be at most 1000000"),
        (#""snapshotEvery": 2.5"#, "expected a whole number"),
        (#""directory": """#, "directory is empty"),
        (#""flush": true"#, "expected a string"),
    ])
    func outOfRangeSettingsAreRefused(member: String, says: String) {
        let found = Self.issues(Self.json(#""durability": { \#(member) }"#))
        #expect(found.count == 1 && found[0].contains("$.durability.") && found[0].contains(says), "\(found)")
    }

    @Test func aMachineDurabilityThatIsNotAStringIsRefused() {
        let found = Self.issues(Self.json(machine: #", "durability": 1"#))
        #expect(found.count == 1 && found[0].hasPrefix("wrong-type $.machines[0].durability:"), "\(found)")
    }

    @Test func theDataDirectoryIsTakenFromTheTopologyFile() throws {
        let folder = URL(fileURLWithPath: "/srv/topologies")
        var topology = try Self.load(Self.json())
        #expect(topology.dataDirectory(besides: folder).path == "/srv/topologies/grove-data/orders")
        topology.durability.directory = "../state/orders"
        #expect(topology.dataDirectory(besides: folder).path == "/srv/state/orders")
        topology.durability.directory = "/var/lib/grove"
        #expect(topology.dataDirectory(besides: folder).path == "/var/lib/grove")
    }

    @Test func withoutAFileTheDataDirectoryIsTheStandardOne() throws {
        let topology = try Self.load(Self.json())
        #expect(topology.dataDirectory(besides: nil) == DataDirectory.standard().appendingPathComponent("orders"))
        #expect(DataDirectory.standard(environment: ["XDG_STATE_HOME": "/x/state", "HOME": "/home/ada"]).path == "/x/state/grove")
        #expect(DataDirectory.standard(environment: ["HOME": "/home/ada"]).path == "/home/ada/.local/state/grove")
        // The XDG spec ignores a relative XDG_STATE_HOME.
        #expect(DataDirectory.standard(environment: ["XDG_STATE_HOME": "state", "HOME": "/home/ada"]).path
                == "/home/ada/.local/state/grove")
    }

    @Test func durableMachinesAreWelcomedWithTheirLevelAndTheSettings() throws {
        var topology = CoreFixture.topology
        topology.machines[0].durability = .state   // auth, on edge
        topology.machines[2].durability = .journal // poller, keyed, on edge
        topology.durability = .init(snapshotEvery: 50, flush: .disk)
        var fixture = CoreFixture(topology: topology)
        let edge = try #require(fixture.register("edge").first?.sentToWorker)
        let body = try payload(Welcome.self, of: edge.message)
        #expect(body.machines == [
            .init(name: "auth", type: "AuthFlow", keyed: false, durability: .state),
            .init(name: "loader", type: "DataLoader", keyed: false),
            .init(name: "poller", type: "PollingService", keyed: true, durability: .journal),
        ])
        #expect(body.snapshotEvery == 50 && body.flush == .disk)
        #expect(body.hasDurableMachines)

        // A worker without durable machines hears nothing of durability: the welcome an older
        // coordinator sent, so it never opens a store.
        let data = try #require(fixture.register("data-1").first?.sentToWorker)
        let plain = try payload(Welcome.self, of: data.message)
        #expect(plain.snapshotEvery == nil && plain.flush == nil && !plain.hasDurableMachines)
        let text = String(decoding: data.message.payload, as: UTF8.self)
        #expect(!text.contains("durability") && !text.contains("snapshotEvery") && !text.contains("flush"), "\(text)")
    }

    @Test func aWelcomeFromAnOlderCoordinatorDecodesAsNone() throws {
        let old = #"{"machines":[{"name":"auth","type":"AuthFlow","keyed":false}],"remoteIO":[],"heartbeatIntervalMs":250,"heartbeatTimeoutMs":1500,"mailboxCapacity":64}"#
        let welcome = try WireJSON.decode(Welcome.self, from: Array(old.utf8))
        #expect(welcome.machines[0].durability == nil && welcome.snapshotEvery == nil && welcome.flush == nil)
        #expect(!welcome.hasDurableMachines)
    }
}
