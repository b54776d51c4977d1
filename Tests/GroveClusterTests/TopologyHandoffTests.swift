@testable import GroveCluster
import Testing

/// `durability.handoff`: read, refused at its path when it cannot work (no shared store) or is
/// out of range, and which machines it moves.
@Suite("Topology handoff", .timeLimit(.minutes(2)))
struct TopologyHandoffTests {
    typealias T = TopologyDurabilityTests
    static let postgres = #""postgres": { "url": "postgres://grove@db:5432/orders" }"#

    @Test func theGracePeriodIsRead() throws {
        let topology = try T.load(T.json(#""durability": { \#(Self.postgres), "handoff": { "graceMs": 2000 } }"#))
        #expect(topology.durability.handoff == .init(graceMs: 2000))
        #expect(try T.load(T.json(#""durability": { \#(Self.postgres) }"#)).durability.handoff == nil)
    }

    @Test(arguments: [
        (#""handoff": { "graceMs": 2000 }"#, "invalid-value $.durability.handoff", "add durability.postgres"),
        (#"\#(postgres), "handoff": {}"#, "missing-key $.durability.handoff.graceMs", "grace period"),
        (#"\#(postgres), "handoff": { "graceMs": 0 }"#, "invalid-value $.durability.handoff.graceMs", "graceMs"),
        (#"\#(postgres), "handoff": { "graceMs": 3600001 }"#, "invalid-value $.durability.handoff.graceMs", "at most 3600000"),
        (#"\#(postgres), "handoff": { "graceMs": 10, "ms": 1 }"#, "unknown-key $.durability.handoff.ms", "graceMs"),
        (#"\#(postgres), "handoff": 2000"#, "wrong-type $.durability.handoff", "an object like"),
    ])
    func mistakesAreRefusedAtTheirPaths(section: String, at path: String, says: String) {
        let found = T.issues(T.json(#""durability": { \#(section) }"#))
        #expect(found.count == 1 && found[0].hasPrefix(path) && found[0].contains(says), "\(found)")
    }

    @Test func onlyDurableKeyedMachinesOfAPoolHandOff() {
        let topology = Topology(
            name: "t", coordinator: .init(clients: "inproc://c", workers: "inproc://w", events: "inproc://e"),
            workers: [.init(name: "edge"), .init(name: "pool", count: 2)],
            machines: [
                .init(name: "counter", type: "Counter", worker: "pool", keyed: true, durability: .journal),
                .init(name: "scratch", type: "Counter", worker: "pool", keyed: true),
                .init(name: "single", type: "Counter", worker: "pool", durability: .state),
                .init(name: "alone", type: "Counter", worker: "edge", keyed: true, durability: .state),
            ],
            durability: .init(postgres: .init(url: "postgres://grove@db/orders"), handoff: .init(graceMs: 10)))
        #expect(topology.machines.filter(topology.handsOff).map(\.name) == ["counter"])
    }
}
