import Foundation
@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
import Testing

/// A topology whose one worker group has `supervision` (a JSON object) and `extra` members.
private func topology(supervision: String, extra: String = "") -> String {
    """
    {
      "name": "t",
      "coordinator": { "clients": "ipc:///run/t/clients", "workers": "ipc:///run/t/workers", "events": "ipc:///run/t/events" },
      "workers": [ { "name": "edge", "supervision": \(supervision)\(extra) } ],
      "machines": []
    }
    """
}

private func problems(_ json: String) -> [String] {
    do {
        _ = try Topology(json: Data(json.utf8), source: "t.json")
        return []
    } catch {
        return error.issues.map { "\($0.path): \($0.message)" }
    }
}

@Suite("Topology supervision", .timeLimit(.minutes(2)))
struct TopologySupervisionTests {
    @Test func absentMeansTheDefaults() throws {
        let json = topology(supervision: "{}").replacingOccurrences(of: #", "supervision": {}"#, with: "")
        let group = try #require(try Topology(json: Data(json.utf8), source: "t.json").workers.first)
        #expect(group.supervision == Topology.Supervision())
        #expect(group.supervision.onGiveUp == .escalate)
        #expect(group.supervision.finalExitCodes == [2, 64, 78])
    }

    @Test func everyKeyIsRead() throws {
        let json = topology(supervision: """
            { "intensity": 3, "periodMs": 2000, "backoff": { "initialMs": 0, "maxMs": 800, "resetAfterMs": 1500 },
              "finalExitCodes": [64], "onGiveUp": "stay-down" }
            """)
        let group = try #require(try Topology(json: Data(json.utf8), source: "t.json").workers.first)
        #expect(group.supervision == Topology.Supervision(
            intensity: 3, periodMs: 2000, backoff: .init(initialMs: 0, maxMs: 800, resetAfterMs: 1500),
            finalExitCodes: [64], onGiveUp: .stayDown))
    }

    @Test func mistakesAreNamedWithTheirPaths() {
        let found = problems(topology(supervision: """
            { "intensity": -1, "periodMs": 0, "backoff": { "initialMs": 500, "maxMs": 100, "resetAfter": 1 },
              "finalExitCodes": [300, "x"], "onGiveUp": "escalte" }
            """))
        let expected = [
            "$.workers[0].supervision.intensity: intensity must be at least 0",
            "$.workers[0].supervision.periodMs: periodMs must be at least 1",
            "$.workers[0].supervision.backoff.resetAfter: unknown key 'resetAfter'; did you mean 'resetAfterMs'?",
            "$.workers[0].supervision.backoff.maxMs: maxMs (100) must be at least initialMs (500)",
            "$.workers[0].supervision.finalExitCodes[0]: expected an exit status",
            "$.workers[0].supervision.finalExitCodes[1]: expected an exit status",
            "$.workers[0].supervision.onGiveUp: unknown onGiveUp 'escalte'; did you mean 'escalate'?",
        ]
        #expect(found.count == expected.count, "\(found)")
        for prefix in expected {
            #expect(found.contains { $0.hasPrefix(prefix) }, "missing \(prefix) in \(found)")
        }
    }

    @Test func anExternalGroupHasNoSupervision() {
        let found = problems(topology(supervision: "{}", extra: #", "external": true"#))
        #expect(found.count == 1)
        #expect(found.first?.hasPrefix("$.workers[0].supervision: an external group is started by hand") == true, "\(found)")
    }

    @Test func backoffDoublesFromInitialToMax() {
        let backoff = Topology.Supervision.Backoff(initialMs: 100, maxMs: 1000)
        #expect((0..<6).map(backoff.delay(afterRestartsInRow:)) == [100, 200, 400, 800, 1000, 1000].map(Duration.milliseconds))
        #expect(Topology.Supervision.Backoff(initialMs: 0, maxMs: 0).delay(afterRestartsInRow: 3) == .zero)
    }
}
