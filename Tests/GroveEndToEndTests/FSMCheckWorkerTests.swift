import Foundation
import Testing

extension EndToEnd {
    /// fsm-check on a machine of the user's own: `ShopWorker` (Tests/Fixtures/ShopWorker) is a
    /// worker executable outside Grove's targets whose `Checkout` leaves one pair unhandled on
    /// purpose; `fsm-check --worker` runs it with `--describe` and checks what it prints as it
    /// checks a shipped example.
    @Suite(.timeLimit(.minutes(2)))
    struct FSMCheckWorkerTests {
        static var check: URL { Products.directory.appendingPathComponent("fsm-check") }
        static var shop: URL { Products.directory.appendingPathComponent("ShopWorker") }

        /// fsm-check with `arguments`.
        func check(_ arguments: [String]) async throws -> CommandResult { try await run(Self.check, arguments) }

        func run(_ executable: URL, _ arguments: [String]) async throws -> CommandResult {
            let directory = try Cluster.makeDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            return try await runCommand(executable, arguments, in: directory, timeout: .seconds(60))
        }

        @Test func checksAUsersMachineAndNamesItsFault() async throws {
            let report = try await check(["--worker", Self.shop.path, "Checkout"])
            #expect(report.status == 1, "\(report)")
            #expect(report.stdout.hasPrefix("Checkout: "), "\(report)")
            #expect(report.stdout.contains("4 state cases reached, 6 transitions, to 4 events deep\n"), "\(report)")
            #expect(report.stdout.contains("unhandled pairs (5):\n  shopping: paid, declined\n  paying: add\n  declined: paid, declined\n"),
                    "\(report)")
            #expect(report.stdout.hasSuffix("\nnot clean\n"), "\(report)")

            // docs/CHECK.md ("Your own machines") shows this report as it is.
            let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            let document = try String(contentsOf: root.appendingPathComponent("docs/CHECK.md"), encoding: .utf8)
            #expect(document.contains("```\n" + report.stdout + "```\n"), "docs/CHECK.md should show the report:\n\(report.stdout)")

            let allowed = try await check(["--worker", Self.shop.path, "Checkout", "--allow-unhandled"])
            #expect(allowed.status == 0, "\(allowed)")
        }

        @Test func drawsAUsersMachine() async throws {
            let mermaid = try await check(["--worker", Self.shop.path, "Checkout", "--mermaid", "--allow-unhandled"])
            #expect(mermaid.status == 0, "\(mermaid)")
            #expect(mermaid.stdout.hasPrefix("stateDiagram-v2\n    [*] --> shopping\n    shopping --> shopping: add\n"), "\(mermaid)")
            #expect(mermaid.stdout.contains("    paying --> paid: paid\n    paying --> declined: declined\n"), "\(mermaid)")
            #expect(mermaid.stdout.contains("    paid --> [*]\n"), "\(mermaid)")

            let dot = try await check(["--worker", Self.shop.path, "Checkout", "--dot", "--allow-unhandled"])
            #expect(dot.stdout.hasPrefix("digraph \"Checkout\" {"), "\(dot)")

            // No type named: every machine the worker describes.
            let json = try await check(["--worker", Self.shop.path, "--json"])
            #expect(json.status == 1, "\(json)")
            struct Graph: Decodable { var machine: String; var terminal: [String] }
            let graphs = try JSONDecoder().decode([Graph].self, from: Data(json.stdout.utf8))
            #expect(graphs.map { $0.machine } == ["Checkout"] && graphs.first?.terminal == ["paid"], "\(json)")
        }

        @Test func theWorkerAnswersDescribeWithoutACoordinator() async throws {
            let described = try await run(Self.shop, ["--describe", "Checkout"])
            #expect(described.status == 0, "\(described)")
            struct Graph: Decodable { var machine: String; var initial: String }
            let graph = try JSONDecoder().decode(Graph.self, from: Data(described.stdout.utf8))
            #expect(graph.machine == "Checkout" && graph.initial == "shopping")

            let names = try await run(Self.shop, ["--describe-machines"])
            #expect(names.status == 0 && (try? JSONDecoder().decode([String].self, from: Data(names.stdout.utf8))) == ["Checkout"],
                    "\(names)")
        }

        @Test func aTypeTheWorkerDoesNotDescribeIsAUsageError() async throws {
            let unknown = try await check(["--worker", Self.shop.path, "Nope"])
            #expect(unknown.status == 64, "\(unknown)")
            #expect(unknown.stderr.contains("no describable machine type 'Nope' in this worker; it describes Checkout"), "\(unknown)")
            #expect(unknown.stderr.components(separatedBy: "error: ").count == 2, "one error prefix, not the worker's after ours: \(unknown)")

            // Hosted, but with no Checkable description: the error says how to add one.
            let hostedOnly = try await check(["--worker", Self.shop.path, "Tally"])
            #expect(hostedOnly.status == 64, "\(hostedOnly)")
            #expect(hostedOnly.stderr.contains("It hosts 'Tally', but no Checkable description of it: add `worker.checkable(Tally.self)`"),
                    "\(hostedOnly)")
        }

        @Test func aWorkerThatIsNoneOrPrintsNoGraphIsNamed() async throws {
            let directory = try Cluster.makeDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let missing = try await check(["--worker", directory.appendingPathComponent("no-such-worker").path, "Checkout"])
            #expect(missing.status == 64, "\(missing)")
            #expect(missing.stderr.contains("no-such-worker does not exist"), "\(missing)")

            let plain = directory.appendingPathComponent("plain-file")
            try Data("not a program".utf8).write(to: plain)
            let notExecutable = try await check(["--worker", plain.path, "Checkout"])
            #expect(notExecutable.status == 64, "\(notExecutable)")
            #expect(notExecutable.stderr.contains("plain-file is not executable"), "\(notExecutable)")

            // echo exits 0 with its arguments on stdout: no state graph.
            let echo = try await check(["--worker", "/bin/echo", "Checkout"])
            #expect(echo.status == 70, "\(echo)")
            #expect(echo.stderr.contains("/bin/echo --describe Checkout printed no state graph"), "\(echo)")
            #expect(echo.stderr.contains("it printed: '--describe Checkout --describe-limit 10000"), "\(echo)")
        }
    }
}
