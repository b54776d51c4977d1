import Foundation
@testable import GroveCluster
import Testing

/// `workers[].direct` (docs/DIRECT-ROUTES.md 1.2): off unless a group turns it on; a value that
/// is no flag is an error at its path; `fsm-launch --check` refuses a direct socket path that
/// would not fit.
@Suite("Topology: workers[].direct", .timeLimit(.minutes(2)))
struct TopologyDirectTests {
    static func topology(name: String = "direct", workers: String) throws -> Topology {
        try Topology(json: Data("""
            {
              "name": "\(name)",
              "workers": \(workers),
              "machines": [ { "name": "counter", "type": "Counter", "worker": "data", "keyed": true } ]
            }
            """.utf8), source: "direct.json")
    }

    @Test func offByDefaultOnWhenSaid() throws {
        #expect(try Self.topology(workers: #"[{ "name": "data", "count": 2 }]"#).workers[0].direct == false)
        #expect(try Self.topology(workers: #"[{ "name": "data", "count": 2, "direct": true }]"#).workers[0].direct)
    }

    @Test func aValueThatIsNoFlagIsAnErrorAtItsPath() throws {
        do {
            _ = try Self.topology(workers: #"[{ "name": "data", "direct": "yes" }]"#)
            Issue.record("a string was taken for a flag")
        } catch {
            #expect("\(error)".contains("$.workers[0].direct"), "\(error)")
        }
    }

    @Test func aDirectSocketTooLongForItsPathIsAProblemNamingTheRuntimeDirectory() throws {
        let topology = try Self.topology(name: "t", workers: #"[{ "name": "data", "count": 2, "direct": true }]"#)
        #expect(topology.coordinator.workers.hasPrefix("ipc://"))
        let short = ["GROVE_RUNTIME_DIR": "/tmp/g"]
        #expect(topology.directSocketProblems(environment: short, uid: 1000).isEmpty)
        #expect(RuntimeDirectory.directSocket(ofTopology: "t", instance: "data-2", incarnation: 255, environment: short, uid: 1000)
            == "/tmp/g/t/direct/data-2.00000000000000ff")
        let long = ["GROVE_RUNTIME_DIR": "/tmp/" + String(repeating: "x", count: 80)]
        let problems = topology.directSocketProblems(environment: long, uid: 1000)
        #expect(problems.count == 1)
        #expect(problems.first?.hasPrefix("$.workers[0].direct: worker data-") == true, "\(problems)")
        #expect(problems.first?.contains("GROVE_RUNTIME_DIR") == true)
        // Off: no socket, no problem.
        let off = try Self.topology(name: "t", workers: #"[{ "name": "data", "count": 2 }]"#)
        #expect(off.directSocketProblems(environment: long, uid: 1000).isEmpty)
    }
}
