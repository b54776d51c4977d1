import Foundation
@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
import Testing

/// `ioLimits` and `io[].timeoutMs`: their defaults, their values, and a clear error with its
/// JSON path for each bad one.
@Suite("Topology io limits", .timeLimit(.minutes(2)))
struct TopologyIOLimitsTests {
    static func document(_ io: String, _ extra: String = "") -> String {
        """
        {
          "name": "t",
          "coordinator": { "clients": "ipc:///run/t/clients", "workers": "ipc:///run/t/workers", "events": "ipc:///run/t/events" },
          "workers": [ { "name": "edge" }, { "name": "io" } ],
          "machines": [ { "name": "auth", "type": "AuthFlow", "worker": "edge" } ],
          "io": \(io)\(extra.isEmpty ? "" : ",\n  " + extra)
        }
        """
    }

    static func issues(_ json: String) -> [TopologyIssue] {
        do {
            _ = try Topology(json: Data(json.utf8), source: "t.json")
            Issue.record("expected the topology to be refused")
            return []
        } catch {
            return error.issues
        }
    }

    @Test func withoutSettingsEveryCallHasTheDefaults() throws {
        let topology = try Topology(json: Data(Self.document(#"[{ "request": "Authenticate", "worker": "io" }]"#).utf8), source: "t.json")
        #expect(topology.ioLimits == Topology.IOLimits(timeoutMs: 30000, concurrentPerWorker: 256))
        #expect(topology.io == [.init(request: "Authenticate", worker: "io", timeoutMs: nil)])
        #expect(topology.ioTimeoutMs(for: "Authenticate") == 30000)
        #expect(topology.ioTimeoutMs(for: "ValidateForm") == 30000)
    }

    @Test func aPlacementsTimeoutOverridesTheDefault() throws {
        let io = #"[{ "request": "Authenticate", "worker": "io", "timeoutMs": 250 }, { "request": "FetchItems", "worker": "io" }]"#
        let json = Self.document(io, #""ioLimits": { "timeoutMs": 5000, "concurrentPerWorker": 8 }"#)
        let topology = try Topology(json: Data(json.utf8), source: "t.json")
        #expect(topology.ioLimits == Topology.IOLimits(timeoutMs: 5000, concurrentPerWorker: 8))
        #expect(topology.ioTimeoutMs(for: "Authenticate") == 250)
        #expect(topology.ioTimeoutMs(for: "FetchItems") == 5000)
        #expect(topology.ioTimeoutMs(for: "ValidateForm") == 5000, "io that runs beside its machine takes the default")
    }

    @Test func badValuesAreReportedWithTheirPaths() {
        let io = """
            [{ "request": "Authenticate", "worker": "io", "timeoutMs": "fast" },
             { "request": "FetchItems", "worker": "io", "timeoutMs": 2.5 },
             { "request": "SubmitForm", "worker": "io", "timeoutMs": 0 },
             { "request": "FetchData", "worker": "io", "timeout": 100 }]
            """
        let found = Self.issues(Self.document(io, #""ioLimits": { "timeoutMs": -1, "concurrentPerWorker": "many", "concurrent": 3 }"#))
        #expect(found.map { "\($0.code) \($0.path)" } == [
            "wrong-type $.io[0].timeoutMs",
            "invalid-value $.io[1].timeoutMs",
            "invalid-value $.io[2].timeoutMs",
            "unknown-key $.io[3].timeout",
            "unknown-key $.ioLimits.concurrent",
            "invalid-value $.ioLimits.timeoutMs",
            "wrong-type $.ioLimits.concurrentPerWorker",
        ])
        let messages = Dictionary(found.map { ($0.path, $0.message) }, uniquingKeysWith: { first, _ in first })
        #expect(messages["$.io[0].timeoutMs"]?.hasPrefix("expected a number, found a string") == true)
        #expect(messages["$.io[1].timeoutMs"]?.hasPrefix("expected a whole number, found 2.5") == true)
        #expect(messages["$.io[2].timeoutMs"]?.hasPrefix("timeoutMs must be at least 1, found 0") == true)
        #expect(messages["$.io[3].timeout"] == "unknown key 'timeout'; did you mean 'timeoutMs'?")
        #expect(messages["$.ioLimits.concurrent"] == "unknown key 'concurrent'; did you mean 'concurrentPerWorker'?")
        #expect(messages["$.ioLimits.timeoutMs"]?.hasPrefix("timeoutMs must be at least 1, found -1") == true)
    }

    @Test func ioLimitsMustBeAnObject() {
        let found = Self.issues(Self.document("[]", #""ioLimits": 30000"#))
        #expect(found.map { "\($0.code) \($0.path)" } == ["wrong-type $.ioLimits"])
        #expect(found.first?.message.contains(#"{ "timeoutMs": 30000, "concurrentPerWorker": 256 }"#) == true)
    }
}
