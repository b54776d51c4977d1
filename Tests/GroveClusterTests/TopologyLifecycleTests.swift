import Foundation
@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
import GroveWire
import Testing

/// `machines[].onEnd`: `stay` when absent, read as written, refused with the exact path when
/// unknown or when `remove` is asked of a machine that is not keyed.
@Suite("Topology onEnd", .timeLimit(.minutes(2)))
struct TopologyLifecycleTests {
    static func json(auth: String = "", counter: String = "") -> String {
        TopologyDurabilityTests.json(machine: auth).replacingOccurrences(
            of: #""keyed": true, "durability": "state" }"#, with: #""keyed": true, "durability": "state"\#(counter) }"#)
    }

    @Test func absentMeansStay() throws {
        let topology = try TopologyDurabilityTests.load(Self.json())
        #expect(topology.machines.map(\.onEnd) == [.stay, .stay])
    }

    @Test func everyPolicyIsRead() throws {
        let topology = try TopologyDurabilityTests.load(Self.json(auth: #", "onEnd": "restart""#, counter: #", "onEnd": "remove""#))
        #expect(topology.machines.map(\.onEnd) == [.restart, .remove])
        let staying = try TopologyDurabilityTests.load(Self.json(auth: #", "onEnd": "stay""#, counter: #", "onEnd": "restart""#))
        #expect(staying.machines.map(\.onEnd) == [.stay, .restart])
    }

    @Test func removeOnAMachineThatIsNotKeyedIsRefusedAtItsPath() {
        let found = TopologyDurabilityTests.issues(Self.json(auth: #", "onEnd": "remove""#))
        #expect(found.count == 1, "\(found)")
        #expect(found.first?.hasPrefix(#"invalid-value $.machines[0].onEnd: onEnd "remove" frees an instance's key, and this machine is not keyed"#) == true,
                "\(found)")
        #expect(found.first?.contains(#"use "restart" to start it again, or set "keyed": true"#) == true, "\(found)")
    }

    @Test func anUnknownPolicyIsRefusedWithAGuessAndTheChoices() {
        let found = TopologyDurabilityTests.issues(Self.json(counter: #", "onEnd": "restrat""#))
        #expect(found.count == 1, "\(found)")
        #expect(found.first?.hasPrefix("invalid-value $.machines[1].onEnd: unknown onEnd 'restrat'; did you mean 'restart'?") == true, "\(found)")
        #expect(found.first?.contains(#""remove" (keyed machines: the instance is dropped and its key is free)"#) == true, "\(found)")
        let typed = TopologyDurabilityTests.issues(Self.json(counter: #", "onEnd": true"#))
        #expect(typed.first?.hasPrefix("wrong-type $.machines[1].onEnd: expected a string") == true, "\(typed)")
    }
}
