import Foundation
@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
import GroveWire
import Testing

/// The `poison` section (issue 34, crash containment): read with its defaults, refused with
/// exact paths.
@Suite("Topology poison", .timeLimit(.minutes(2)))
struct TopologyPoisonTests {
    @Test func absentMeansTheDefaults() throws {
        let topology = try TopologyDurabilityTests.load(TopologyDurabilityTests.json())
        #expect(topology.poison == Topology.PoisonSettings())
        #expect(topology.poison.quarantineAfter == 2 && topology.poison.suspendAfter == 2 && topology.poison.periodMs == 600_000)
    }

    @Test func everyKeyIsRead() throws {
        let topology = try TopologyDurabilityTests.load(TopologyDurabilityTests.json(
            #""poison": { "quarantineAfter": 3, "suspendAfter": 0, "periodMs": 60000 }"#))
        #expect(topology.poison == .init(quarantineAfter: 3, suspendAfter: 0, periodMs: 60_000))
    }

    @Test func badValuesAreRefusedAtTheirPaths() {
        let found = TopologyDurabilityTests.issues(TopologyDurabilityTests.json(
            #""poison": { "quarantineAfter": -1, "suspendAfter": 1001, "periodMs": 0, "forgiveAfter": 1 }"#))
        #expect(found.count == 4, "\(found)")
        #expect(found.contains { $0.hasPrefix("unknown-key $.poison.forgiveAfter: unknown key 'forgiveAfter'") }, "\(found)")
        #expect(found.contains { $0.contains("$.poison.quarantineAfter") }, "\(found)")
        #expect(found.contains { $0.hasPrefix("invalid-value $.poison.suspendAfter: suspendAfter must be at most 1000, found 1001") }, "\(found)")
        #expect(found.contains { $0.contains("$.poison.periodMs") }, "\(found)")
    }

    @Test func aPoisonSectionThatIsNotAnObjectIsRefused() {
        let found = TopologyDurabilityTests.issues(TopologyDurabilityTests.json(#""poison": 2"#))
        #expect(found == ["wrong-type $.poison: expected an object like \(TopologyDecoder.poisonExample), found a number (2)"], "\(found)")
    }
}
