import Foundation
@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
import GroveWire
import Testing

/// `machines[].audit` and the top-level `audit` section: read with their defaults, refused with
/// exact paths, resolved to a directory, and carried to workers in the welcome.
@Suite("Topology audit", .timeLimit(.minutes(2)))
struct TopologyAuditTests {
    static func json(machine: String = "", _ extra: String = "") -> String {
        TopologyDurabilityTests.json(machine: machine, extra)
    }

    @Test func absentMeansNothingIsAuditedAndTheDefaults() throws {
        let topology = try TopologyDurabilityTests.load(Self.json())
        #expect(topology.machines.map(\.audit) == [false, false])
        #expect(topology.audit == Topology.AuditSettings())
        #expect(topology.audit.directory == nil && !topology.audit.states && topology.audit.flush == .process)
        #expect(!topology.hasAuditedMachines)
    }

    @Test func everyKeyIsRead() throws {
        let topology = try TopologyDurabilityTests.load(Self.json(
            machine: #", "audit": true"#, #""audit": { "directory": "/var/log/grove", "states": true, "flush": "disk" }"#))
        #expect(topology.machines.map(\.audit) == [true, false])
        #expect(topology.audit == .init(directory: "/var/log/grove", states: true, flush: .disk))
        #expect(topology.hasAuditedMachines)
    }

    @Test func badValuesAreRefusedAtTheirPaths() {
        let found = TopologyDurabilityTests.issues(Self.json(
            machine: #", "audit": "yes""#, #""audit": { "directory": "", "rotate": true }"#))
        #expect(found == [
            "wrong-type $.machines[0].audit: expected true or false, found a string (\"yes\"); write it like \"audit\": true "
                + "(whether each committed transition goes to the topology's audit log)",
            "unknown-key $.audit.rotate: unknown key 'rotate'; remove it (known keys: directory, states, flush)",
            "invalid-value $.audit.directory: directory is empty; write it like \"directory\": \"grove-audit/default\" "
                + "(where each worker appends its <worker>.jsonl, relative to the topology file)",
        ], "\(found)")
    }

    @Test func badStatesAndFlushAreRefusedAtTheirPaths() {
        let found = TopologyDurabilityTests.issues(Self.json(#""audit": { "states": 1, "flush": "disc" }"#))
        #expect(found.count == 2, "\(found)")
        #expect(found.contains { $0.hasPrefix("wrong-type $.audit.states: expected true or false, found a number (1)") }, "\(found)")
        #expect(found.contains { $0.hasPrefix("invalid-value $.audit.flush: unknown flush 'disc'; did you mean 'disk'?") }, "\(found)")
    }

    @Test func anAuditThatIsNotAnObjectIsRefused() {
        let found = TopologyDurabilityTests.issues(Self.json(#""audit": true"#))
        #expect(found == ["wrong-type $.audit: expected an object like \(TopologyDecoder.auditExample), found a boolean (true)"], "\(found)")
    }

    @Test func theDirectoryIsTakenFromTheTopologyFile() throws {
        var topology = try TopologyDurabilityTests.load(Self.json())
        let folder = URL(fileURLWithPath: "/srv/topologies")
        #expect(topology.auditDirectory(besides: folder).path == "/srv/topologies/grove-audit/orders")
        topology.audit.directory = "../logs"
        #expect(topology.auditDirectory(besides: folder).path == "/srv/logs")
        topology.audit.directory = "/var/log/grove"
        #expect(topology.auditDirectory(besides: folder).path == "/var/log/grove")
    }

    @Test func theWelcomeNamesTheAuditedMachinesPlacedOnTheWorker() throws {
        let topology = try TopologyDurabilityTests.load(Self.json(machine: #", "audit": true"#, #""audit": { "states": true }"#))
        #expect(topology.auditPlacement(of: topology.machines.filter { $0.worker == "main" })
            == AuditPlacement(machines: ["auth"], states: true, flush: .process))
        #expect(topology.auditPlacement(of: topology.machines.filter { $0.worker == "io" }) == nil)
    }
}
