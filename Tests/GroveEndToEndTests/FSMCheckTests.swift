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
