import Foundation
@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
import GroveWire
import Testing

/// `machines[].restart`: the backoff and restart intensity of a machine whose `onEnd` is
/// `restart`, the defaults when absent, refused with the exact JSON path when wrong.
@Suite("Topology restart settings", .timeLimit(.minutes(2)))
struct TopologyRestartTests {
    /// `auth` with `onEnd` `restart` (or `onEnd`) and `restart` set to `settings`.
    static func json(_ settings: String?, onEnd: String = "restart") -> String {
        TopologyLifecycleTests.json(auth: #", "onEnd": "\#(onEnd)""# + (settings.map { #", "restart": \#($0)"# } ?? ""))
    }

    @Test func absentMeansTheDefaults() throws {
        let topology = try TopologyDurabilityTests.load(Self.json(nil))
        #expect(topology.machines[0].restart == RestartPolicy(intensity: 5, periodMs: 10_000, backoff: .init(initialMs: 100, maxMs: 5000)))
    }

    @Test func everySettingIsRead() throws {
        let topology = try TopologyDurabilityTests.load(
            Self.json(#"{ "intensity": 3, "periodMs": 60000, "backoff": { "initialMs": 0, "maxMs": 30000 } }"#))
        #expect(topology.machines[0].restart == RestartPolicy(intensity: 3, periodMs: 60_000, backoff: .init(initialMs: 0, maxMs: 30_000)))
        // What is left out keeps its default.
        let partial = try TopologyDurabilityTests.load(Self.json(#"{ "backoff": { "maxMs": 800 } }"#))
        #expect(partial.machines[0].restart == RestartPolicy(backoff: .init(initialMs: 100, maxMs: 800)))
    }

    @Test func restartBesideAnotherOnEndIsRefusedAtItsPath() {
        let found = TopologyDurabilityTests.issues(Self.json(#"{ "intensity": 3 }"#, onEnd: "stay"))
        #expect(found == [#"invalid-value $.machines[0].restart: restart says how an instance is restarted, and this machine's onEnd is "stay", "#
                          + #"so it is never restarted by its policy; set "onEnd": "restart", or remove restart"#])
    }

    @Test(arguments: [
        (#"{ "intensity": -1 }"#, "invalid-value $.machines[0].restart.intensity: intensity must be at least 0, found -1"),
        (#"{ "periodMs": 0 }"#, "invalid-value $.machines[0].restart.periodMs: periodMs must be at least 1, found 0"),
        (#"{ "periodMs": 1000000001 }"#, "invalid-value $.machines[0].restart.periodMs: periodMs must be at most 1000000000"),
        (#"{ "backoff": { "initialMs": 500, "maxMs": 200 } }"#,
         "invalid-value $.machines[0].restart.backoff.maxMs: maxMs (200) must be at least initialMs (500)"),
        (#"{ "backoff": { "maxMs": 2000000000 } }"#, "invalid-value $.machines[0].restart.backoff.maxMs: maxMs must be at most 1000000000"),
        (#"{ "backoff": { "resetAfterMs": 10 } }"#, "unknown-key $.machines[0].restart.backoff.resetAfterMs: unknown key 'resetAfterMs'"),
        (#"{ "intesity": 2 }"#, "unknown-key $.machines[0].restart.intesity: unknown key 'intesity'; did you mean 'intensity'?"),
        (#"{ "intensity": "5" }"#, "wrong-type $.machines[0].restart.intensity: expected a number"),
        (#"5"#, "wrong-type $.machines[0].restart: expected an object like { \"intensity\": 5"),
    ])
    func aWrongSettingIsRefusedAtItsPath(_ settings: String, _ expected: String) {
        let found = TopologyDurabilityTests.issues(Self.json(settings))
        #expect(found.count == 1, "\(found)")
        #expect(found.first?.hasPrefix(expected) == true, "\(found)")
    }
}
