import Foundation
@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
import GroveWire
import Testing

/// The issues loading `json` reports; records a failure when it loads.
private func issues(in json: String, source: String = "test.json") -> [TopologyIssue] {
    do {
        let topology = try Topology(json: Data(json.utf8), source: source)
        Issue.record("expected the topology to be refused, loaded \(topology.name)")
        return []
    } catch {
        #expect(error.source == source)
        #expect(!error.issues.isEmpty)
        return error.issues
    }
}

/// `"<code> <path>"` per issue, for comparisons that show the whole list when they fail.
private func outline(_ issues: [TopologyIssue]) -> [String] {
    issues.map { "\($0.code) \($0.path)" }
}

/// A valid topology with `extra` members inserted into the root object.
private func topology(coordinator: String? = nil, _ extra: String = "") -> String {
    let endpoints = coordinator
        ?? #"{ "clients": "ipc:///run/t/clients", "workers": "ipc:///run/t/workers", "events": "ipc:///run/t/events" }"#
    return """
        {
          "name": "t",
          "coordinator": \(endpoints),
          "workers": [ { "name": "edge" }, { "name": "pool", "count": 2 } ],
          "machines": [
            { "name": "auth", "type": "AuthFlow", "worker": "edge" },
            { "name": "poller", "type": "PollingService", "worker": "pool", "keyed": true }
          ]\(extra.isEmpty ? "" : ",\n  " + extra)
        }
        """
}

@Suite("Topology validation", .timeLimit(.minutes(2)))
struct TopologyValidationTests {
    @Test func reportsEveryMistakeWithItsPath() {
        let json = """
            {
              "name": "broken",
              "coordinator": {
                "clients": "ipc:///run/b/clients",
                "workers": "localhost:5555",
                "events": "ipc:///run/b/clients"
              },
              "workers": [
                { "name": "edge" },
                { "name": "edge", "count": 0 },
                { "name": "io", "count": "two" }
              ],
              "machines": [
                { "name": "auth", "type": "AuthFlow", "worker": "edge" },
                { "name": "poller", "type": "PollingService", "worker": "edge", "keyed": true },
                { "name": "loader", "type": "DataLoader", "worker": "egde" },
                { "name": "auth", "type": "", "workr": "edge" }
              ],
              "io": [
                { "request": "Authenticate", "worker": "nowhere" }
              ],
              "routes": [
                { "from": "auth", "when": "signedIn", "to": "poller", "event": "startPolling" },
                { "from": "ghost", "to": "loader/x" }
              ],
              "heartbeat": { "intervalMs": 500, "timeoutMs": 400 },
              "queues": { "mailboxCapacity": -1, "workerOutbox": 1.5, "workerOutboxBytes": "lots", "clientOutboxBytes": 0 }
            }
            """
        let found = issues(in: json, source: "broken.json")
        #expect(outline(found) == [
            "invalid-endpoint $.coordinator.workers",
            "invalid-endpoint $.coordinator.events",
            "duplicate-name $.workers[1].name",
            "invalid-value $.workers[1].count",
            "wrong-type $.workers[2].count",
            "unknown-reference $.machines[2].worker",
            "unknown-key $.machines[3].workr",
            "duplicate-name $.machines[3].name",
            "invalid-value $.machines[3].type",
            "missing-key $.machines[3].worker",
            "unknown-reference $.io[0].worker",
            "invalid-value $.routes[0].to",
            "unknown-reference $.routes[1].from",
            "invalid-value $.routes[1].to",
            "invalid-value $.heartbeat.timeoutMs",
            "invalid-value $.queues.mailboxCapacity",
            "invalid-value $.queues.workerOutbox",
            "wrong-type $.queues.workerOutboxBytes",
            "invalid-value $.queues.clientOutboxBytes",
        ])
        let messages = Dictionary(found.map { ($0.path, $0.message) }, uniquingKeysWith: { first, _ in first })
        #expect(messages["$.coordinator.workers"]?.contains("start it with ipc:// or tcp://") == true)
        #expect(messages["$.coordinator.events"]?.contains("$.coordinator.clients") == true)
        #expect(messages["$.workers[1].name"]?.contains("first at $.workers[0].name") == true)
        #expect(messages["$.workers[2].count"]?.hasPrefix("expected a number, found a string") == true)
        #expect(messages["$.machines[2].worker"]?.contains("did you mean 'edge'?") == true)
        #expect(messages["$.machines[2].worker"]?.contains("'edge', 'io'") == true)
        #expect(messages["$.machines[3].workr"] == "unknown key 'workr'; did you mean 'worker'?")
        #expect(messages["$.io[0].worker"]?.contains("'edge', 'io'") == true)
        #expect(messages["$.routes[0].to"]?.contains("'poller/<key>'") == true)
        #expect(messages["$.routes[1].to"]?.contains("not keyed") == true)
        #expect(messages["$.heartbeat.timeoutMs"]?.contains("greater than intervalMs (500)") == true)
        #expect(messages["$.queues.workerOutbox"]?.hasPrefix("expected a whole number, found 1.5") == true)
        #expect(messages["$.queues.workerOutboxBytes"]?.hasPrefix("expected a number, found a string") == true)
        #expect(messages["$.queues.clientOutboxBytes"]?.hasPrefix("clientOutboxBytes must be at least 1") == true)
    }

    @Test func descriptionIsOneLinePerIssue() {
        let error = TopologyError(source: "t.json", issues: [
            TopologyIssue(.missingKey, at: "$.name", "missing required key 'name'"),
            TopologyIssue(.unknownKey, at: "$.nmae", "unknown key 'nmae'; did you mean 'name'?"),
        ])
        #expect(error.description == """
            t.json: $.name: missing required key 'name'
            t.json: $.nmae: unknown key 'nmae'; did you mean 'name'?
            """)
    }

    @Test func unknownKeysSuggestTheClosestKnownKey() {
        let found = issues(in: topology(#""heartbeat": { "interval": 100, "timeoutMS": 900 }, "rootes": []"#))
        // An object's unknown keys come before the issues inside its members.
        #expect(outline(found) == [
            "unknown-key $.rootes",
            "unknown-key $.heartbeat.interval",
            "unknown-key $.heartbeat.timeoutMS",
        ])
        #expect(found.map(\.message) == [
            "unknown key 'rootes'; did you mean 'routes'?",
            "unknown key 'interval'; did you mean 'intervalMs'?",
            "unknown key 'timeoutMS'; did you mean 'timeoutMs'?",
        ])
        let unrelated = issues(in: topology(#""colour": "blue""#))
        #expect(unrelated.first?.message.hasPrefix("unknown key 'colour'; remove it (known keys: name,") == true)
    }

    @Test func invalidJSONReportsTheLineAndColumn() {
        let json = """
            {
              "name": "t",
              "workers": [ { "name": "edge" }, ],
            }
            """
        let found = issues(in: json)
        #expect(outline(found) == ["invalid-json $.workers"])
        #expect(found.first?.message == "invalid JSON at line 3, column 34: trailing comma before ']'; remove the comma")

        let missingComma = issues(in: "{\n  \"name\": \"t\"\n  \"workers\": []\n}")
        #expect(missingComma.first?.message.hasPrefix("invalid JSON at line 3, column 3: expected ',' or '}'") == true)
        #expect(issues(in: "").first?.code == .invalidJSON)
        #expect(issues(in: "{ 'name': 1 }").first?.message.contains("double quotes") == true)
        #expect(issues(in: "{} }").first?.message.hasPrefix("invalid JSON at line 1, column 4") == true)
    }

    /// Every escape JSON has, in a topology's strings; an unknown one is named with its column.
    @Test func stringEscapesAreUnescapedAndAnUnknownOneIsNamed() throws {
        var parser = LocatingJSONParser(Array(#"{"s": "q\" b\\ s\/ \b\f\n\r\t \u00e9 \ud83d\ude80"}"#.utf8))
        let parsed = try parser.parse()
        #expect(parsed == .object(["s": .string("q\" b\\ s/ \u{08}\u{0C}\n\r\t é 🚀")]))
        do {
            var unknown = LocatingJSONParser(Array(#"{"s": "a\x"}"#.utf8))
            _ = try unknown.parse()
            Issue.record("an unknown escape was accepted")
        } catch {
            #expect(error.column == 10 && error.message.hasPrefix("unknown escape '\\x'"), "\(error.column): \(error.message)")
        }
    }

    @Test func duplicateKeysAreReported() {
        let json = topology(#""heartbeat": { "intervalMs": 100, "intervalMs": 200 }"#)
        let found = issues(in: json)
        #expect(outline(found) == ["duplicate-key $.heartbeat.intervalMs"])
        #expect(found.first?.message.contains("line 9") == true)
    }

    @Test func wrongTypesNameWhatWasFound() {
        let json = """
            {
              "name": 7, "coordinator": [], "workers": "edge", "routes": {},
              "machines": [ "auth", { "name": "m", "type": "T", "worker": "edge" } ]
            }
            """
        // With no usable workers section, references to groups cannot be checked: no noise.
        #expect(outline(issues(in: json)) == [
            "wrong-type $.name",
            "wrong-type $.coordinator",
            "wrong-type $.workers",
            "wrong-type $.machines[0]",
            "wrong-type $.routes",
        ])
        let brokenEntry = topology().replacingOccurrences(of: #"{ "name": "edge" }"#, with: #""edge""#)
        #expect(outline(issues(in: brokenEntry)) == [
            "wrong-type $.workers[0]",
            "unknown-reference $.machines[0].worker",
        ])
        #expect(issues(in: #"{"name": tru}"#).first?.message.contains("did you mean true?") == true)
        #expect(issues(in: "[]").map(\.message) == [
            "expected a topology (a JSON object with name, workers and machines), found an array",
        ])
    }

    @Test func missingSectionsAreReported() {
        #expect(outline(issues(in: "{}")) == [
            "missing-key $.name",
            "missing-key $.workers",
            "missing-key $.machines",
        ])
        #expect(outline(issues(in: topology().replacingOccurrences(
            of: #"[ { "name": "edge" }, { "name": "pool", "count": 2 } ]"#, with: "[]"
        ))).first == "invalid-value $.workers")
    }

    /// A trillion workers in one group is refused before any instance is named: without the
    /// bound the decoder would spell out every name and never finish (the suite's time limit
    /// catches that hang).
    @Test func aHugeWorkerCountIsRefusedBeforeItsInstancesAreNamed() {
        let found = issues(in: topology().replacingOccurrences(of: #""count": 2"#, with: #""count": 1000000000000"#))
        #expect(outline(found) == ["invalid-value $.workers[1].count"])
        #expect(found.first?.message.hasPrefix(
            "count must be at most 1024 worker processes per group, found 1000000000000; run fewer workers per group, "
            + "or split them over several groups") == true, "\(found)")
    }

    @Test func endpointsNeedASchemeAndTheirOwnAddress() {
        let coordinator = #"{ "clients": "tcp://*:5555", "workers": "tcp://127.0.0.1:5555", "events": "tcp://host" }"#
        #expect(outline(issues(in: topology(coordinator: coordinator))) == [
            "invalid-endpoint $.coordinator.workers",
            "invalid-endpoint $.coordinator.events",
        ])
        let fine = #"{ "clients": "tcp://10.0.0.1:5555", "workers": "tcp://10.0.0.2:5555", "events": "ipc:///run/e" }"#
        #expect(throws: Never.self) { try Topology(json: Data(topology(coordinator: fine, #""security": { "insecure": true }"#).utf8), source: "t") }
        // inproc:// binds, but only the coordinator's own ZeroMQ context could reach it.
        let inproc = #"{ "clients": "ipc:///run/c", "workers": "inproc://w", "events": "ipc:///run/e" }"#
        let refused = issues(in: topology(coordinator: inproc))
        #expect(outline(refused) == ["invalid-endpoint $.coordinator.workers"])
        #expect(refused.first?.message.contains("other processes; use ipc://") == true, "\(refused)")
        let long = "ipc:///tmp/" + String(repeating: "x", count: 120)
        let tooLong = #"{ "clients": "\#(long)", "workers": "ipc:///run/w", "events": "ipc:///run/e" }"#
        #expect(outline(issues(in: topology(coordinator: tooLong))) == ["invalid-endpoint $.coordinator.clients"])
    }

    @Test func routeAddressesAreChecked() {
        let routes = """
            "routes": [
                { "from": "auth", "to": "poller" },
                { "from": "auth", "to": "poller/" },
                { "from": "poller/p1", "to": "auth", "event": null },
                { "from": "auth", "when": "", "to": "pollr/p1", "event": "" }
              ]
            """
        let found = issues(in: topology(routes))
        #expect(outline(found) == [
            "invalid-value $.routes[0].to",
            "invalid-value $.routes[1].to",
            "invalid-value $.routes[2].from",
            "invalid-value $.routes[2].event",
            "invalid-value $.routes[3].when",
            "unknown-reference $.routes[3].to",
            "invalid-value $.routes[3].event",
        ])
        #expect(found[2].message.contains("write 'poller'"))
        #expect(found[5].message.contains("did you mean 'poller'?"))
    }

    /// An address is read in bytes (``MachineAddress``): a `/` followed by a combining mark is
    /// one character to Swift but still ends the machine's name, as grants and placement see it.
    @Test func aRouteSourceWithASlashBeforeACombiningMarkIsAnAddress() {
        let routes = """
            "routes": [ { "from": "poller/\u{301}p1", "to": "auth" } ]
            """
        let found = issues(in: topology(routes))
        #expect(outline(found) == ["invalid-value $.routes[0].from"])
        #expect(found.first?.message.contains("not an address") == true && found.first?.message.contains("write 'poller'") == true,
                "\(found)")
    }

    @Test func poolInstancesCannotTakeAGroupName() {
        let json = topology().replacingOccurrences(
            of: #"{ "name": "edge" }"#, with: #"{ "name": "edge" }, { "name": "pool-2" }"#
        )
        let found = issues(in: json)
        #expect(outline(found) == ["duplicate-name $.workers[2].name"])
        #expect(found.first?.message.contains("instance 'pool-2'") == true)
    }

    @Test func namesCannotContainASlash() {
        let json = topology(#""io": [ { "request": "Authenticate", "worker": "edge" }, { "request": "Authenticate", "worker": "pool" } ]"#)
            .replacingOccurrences(of: #""name": "auth""#, with: #""name": "a/b""#)
        #expect(outline(issues(in: json)) == [
            "invalid-value $.machines[0].name",
            "duplicate-name $.io[1].request",
        ])
    }

    @Test func unreadableFilesAreReported() {
        let url = URL(fileURLWithPath: "/nonexistent/grove/topology.json")
        #expect {
            try Topology.load(contentsOf: url)
        } throws: { error in
            guard let error = error as? TopologyError else { return false }
            return error.source == url.path && error.issues.map(\.code) == [.unreadable]
        }
    }

    @Test func issueEqualityIgnoresTheMessage() {
        #expect(TopologyIssue(.unknownKey, at: "$.a", "one") == TopologyIssue(.unknownKey, at: "$.a", "two"))
        #expect(TopologyIssue(.unknownKey, at: "$.a", "one") != TopologyIssue(.unknownKey, at: "$.b", "one"))
    }
}
