import Foundation
@testable import GroveCluster
@testable import GroveCoordinator
import GroveWire
import Testing

/// `machines[].passivateAfterMs`: absent means never, read as written and carried in the
/// welcome, refused at its path for a machine that is not keyed, or out of range.
@Suite("Topology passivateAfterMs", .timeLimit(.minutes(2)))
struct TopologyPassivationTests {
    @Test func absentMeansNever() throws {
        let topology = try TopologyDurabilityTests.load(TopologyLifecycleTests.json())
        #expect(topology.machines.map(\.passivateAfterMs) == [nil, nil])
    }

    @Test func aKeyedMachineTakesIt() throws {
        let topology = try TopologyDurabilityTests.load(TopologyLifecycleTests.json(counter: #", "passivateAfterMs": 250"#))
        #expect(topology.machines.map(\.passivateAfterMs) == [nil, 250])
    }

    @Test func aMachineThatIsNotKeyedIsRefusedAtItsPath() {
        let found = TopologyDurabilityTests.issues(TopologyLifecycleTests.json(auth: #", "passivateAfterMs": 250"#))
        #expect(found.count == 1, "\(found)")
        #expect(found.first?.hasPrefix("invalid-value $.machines[0].passivateAfterMs: passivateAfterMs lets idle instances of a keyed machine "
            + "leave memory, and this machine is not keyed") == true, "\(found)")
        #expect(found.first?.contains(#"set "keyed": true, or remove passivateAfterMs"#) == true, "\(found)")
    }

    @Test func zeroTooLongAndTextAreRefused() {
        let zero = TopologyDurabilityTests.issues(TopologyLifecycleTests.json(counter: #", "passivateAfterMs": 0"#))
        #expect(zero.first?.hasPrefix("invalid-value $.machines[1].passivateAfterMs: passivateAfterMs must be at least 1, found 0") == true,
                "\(zero)")
        let long = TopologyDurabilityTests.issues(TopologyLifecycleTests.json(counter: #", "passivateAfterMs": 1000000001"#))
        #expect(long.first?.hasPrefix("invalid-value $.machines[1].passivateAfterMs: passivateAfterMs must be at most 1000000000") == true,
                "\(long)")
        let text = TopologyDurabilityTests.issues(TopologyLifecycleTests.json(counter: #", "passivateAfterMs": "1s""#))
        #expect(text.first?.hasPrefix("wrong-type $.machines[1].passivateAfterMs: expected a number") == true, "\(text)")
    }
}
