import Foundation
import Testing

extension EndToEnd {
    /// fsm-check, the executable: a machine whose default: swallows pairs names them and exits 1
    /// unless they are allowed, and draws its graph; a machine with unhandled pairs names them and
    /// exits 1 unless they are allowed; an unknown name is a usage error (64).
    @Suite(.timeLimit(.minutes(2)))
    struct FSMCheckTests {
        static var check: URL { Products.directory.appendingPathComponent("fsm-check") }

        func run(_ arguments: [String]) async throws -> CommandResult {
            let directory = try Cluster.makeDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            return try await runCommand(Self.check, arguments, in: directory)
        }

        @Test func loginFlowFallsThroughAndDrawsAsMermaid() async throws {
            let report = try await run(["LoginFlow"])
            #expect(report.status == 1, "\(report)")
            #expect(report.stdout.contains("pairs that fall through (no change, no effect: a default:, or intended? see intendedNoOps) (27):\n  start: updateEmail,"),
                    "\(report)")
            #expect(report.stdout.hasSuffix("\nnot clean\n"), "\(report)")
            let allowed = try await run(["LoginFlow", "--allow-fall-through"])
            #expect(allowed.status == 0, "the seed's default: break on purpose: \(allowed)")

            let graph = try await run(["LoginFlow", "--mermaid", "--allow-fall-through"])
            #expect(graph.status == 0, "\(graph)")
            #expect(graph.stdout.hasPrefix("stateDiagram-v2\n    [*] --> start\n    start --> enteringCredentials: startLogin\n"))
            #expect(graph.stdout.contains("    completed --> [*]\n"))

            let dot = try await run(["LoginFlow", "--dot"])
            #expect(dot.stdout.hasPrefix("digraph \"LoginFlow\" {"))
            #expect(dot.stdout.contains("\"completed\" [shape=doublecircle];"))
        }

        @Test func unhandledPairsAreNamedAndFailUnlessAllowed() async throws {
            let report = try await run(["DataLoader"])
            #expect(report.status == 1, "\(report)")
            #expect(report.stdout.contains("unhandled pairs (17):\n  idle: reload, dataReceived, loadFailed, retry, dismiss\n"), "\(report)")
            #expect(report.stdout.hasSuffix("\nnot clean\n"))

            let allowed = try await run(["DataLoader", "--allow-unhandled"])
            #expect(allowed.status == 0, "\(allowed)")
        }

        /// Issue 36's new example: the state timeouts its states arm on entry and the sends they
        /// postpone are drawn in the states, in Mermaid, DOT and JSON.
        @Test func bufferedConnectionDrawsEnterActionsAndPostponedEvents() async throws {
            let graph = try await run(["BufferedConnection", "--mermaid", "--allow-unhandled"])
            #expect(graph.status == 0, "\(graph)")
            #expect(graph.stdout.contains("\n    connecting : entry / state timeout 5s sends dialTimedOut\n    connecting : send / defer\n"),
                    "\(graph)")
            #expect(graph.stdout.contains("\n    backingOff --> connecting: retry (state timeout)\n"), "\(graph)")
            let dot = try await run(["BufferedConnection", "--dot"])
            #expect(dot.stdout.contains(#""backingOff" [label="backingOff\nentry / state timeout 1s sends retry\nsend / defer"];"#), "\(dot)")
            let json = try await run(["BufferedConnection", "--json"])
            struct Graph: Decodable { struct Actions: Decodable { var state: String, entry: [String], postponed: [String] }; var actions: [Actions] }
            let actions = try JSONDecoder().decode([Graph].self, from: Data(json.stdout.utf8)).first?.actions ?? []
            #expect(actions.map(\.state) == ["offline", "connecting", "backingOff"], "\(json)")
            #expect(actions.allSatisfy { $0.postponed == ["send"] }, "\(json)")
        }

        /// fsm-check's catalog is the table of findings in docs/CHECK.md, in the same order; the
        /// unit tests (GroveCheckTests) hold each row to what the walk finds.
        @Test func everyCheckedMachineHasARowInCheckDocument() async throws {
            let result = try await run(["--json", "--allow-unhandled", "--allow-fall-through"])
            #expect(result.status == 0, "\(result)")
            struct Graph: Decodable { var machine: String }
            let checked = try JSONDecoder().decode([Graph].self, from: Data(result.stdout.utf8)).map(\.machine)
            let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            let document = try String(contentsOf: root.appendingPathComponent("docs/CHECK.md"), encoding: .utf8)
            let rows = document.split(separator: "\n").filter { $0.hasPrefix("| `") }
            let documented = rows.compactMap { $0.split(separator: "`").dropFirst().first.map(String.init) }
            #expect(checked == documented)
        }

        @Test func anUnknownMachineIsAUsageError() async throws {
            let result = try await run(["Nope"])
            #expect(result.status == 64)
            #expect(result.stderr.contains("unknown machine 'Nope'; fsm-check knows LoginFlow, AuthFlow"), "\(result.stderr)")
        }
    }
}
