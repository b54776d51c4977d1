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
            #expect(echo.stderr.contains("it printed '--describe Checkout --describe-limit 10000"), "\(echo)")
        }

        /// A file in `directory` with `text`, executable.
        func script(_ name: String, _ text: String, in directory: URL) throws -> URL {
            let file = directory.appendingPathComponent(name)
            try Data(text.utf8).write(to: file)
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: file.path)
            return file
        }

        @Test func whatIsNotAWorkerIsNamedWithWhatToDo() async throws {
            let directory = try Cluster.makeDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            // A bare name is looked up on PATH only, as a shell does; one in the current directory is pointed at.
            _ = try script("my-worker", "#!/bin/sh\nexit 0\n", in: directory)
            let bare = try await runCommand(Self.check, ["--worker", "my-worker", "Checkout"], in: directory, timeout: .seconds(60))
            #expect(bare.status == 64, "\(bare)")
            #expect(bare.stderr.contains("--worker my-worker is not on PATH; did you mean --worker ./my-worker?"), "\(bare)")

            // Exits 0 and prints nothing: no raw DecodingError, but what to do.
            let silent = try await check(["--worker", "/bin/true", "Checkout"])
            #expect(silent.status == 70, "\(silent)")
            #expect(silent.stderr.contains("/bin/true --describe Checkout printed no state graph (not JSON); it printed nothing. "
                + "It is not a Grove worker, or was built by an older Grove: rebuild it"), "\(silent)")
            #expect(!silent.stderr.contains("DecodingError"), "\(silent)")

            // Fails without a word: the message says so instead of ending in a colon.
            let failing = try await check(["--worker", "/bin/false", "Checkout"])
            #expect(failing.status == 70, "\(failing)")
            #expect(failing.stderr.contains("/bin/false failed to describe 'Checkout' (exit status 1), and said nothing on stderr. It is not a Grove worker"),
                    "\(failing)")

            let folder = try await check(["--worker", directory.path, "Checkout"])
            #expect(folder.status == 64, "\(folder)")
            #expect(folder.stderr.contains("\(directory.path) is a directory: give the path of a worker executable"), "\(folder)")

            let text = try script("notes", "just some text\n", in: directory)
            let format = try await check(["--worker", text.path, "Checkout"])
            #expect(format.status == 64, "\(format)")
            #expect(format.stderr.contains("cannot run \(text.path): it is not a program this system can run (exec format error"), "\(format)")
        }

        @Test func anEmptyOrRepeatedNameIsNotMisread() async throws {
            let empty = try await check(["--worker", Self.shop.path, ""])
            #expect(empty.status == 64, "\(empty)")
            #expect(empty.stderr.contains("a machine name is empty"), "not 'did not understand --describe': \(empty)")
            #expect(!empty.stderr.contains("did not understand"), "\(empty)")

            let twice = try await check(["--worker", Self.shop.path, "Checkout", "Checkout", "--json", "--allow-unhandled"])
            #expect(twice.status == 0, "\(twice)")
            struct Graph: Decodable { var machine: String }
            let graphs = try JSONDecoder().decode([Graph].self, from: Data(twice.stdout.utf8))
            #expect(graphs.map(\.machine) == ["Checkout"], "a name given twice is described once")
        }

        @Test func aWorkerThatHangsOrFloodsIsKilled() async throws {
            let directory = try Cluster.makeDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            // exec: the sleep is the process fsm-check starts and kills, with no child left behind.
            let hanging = try script("hanging", "#!/bin/sh\necho still thinking >&2\nexec sleep 600\n", in: directory)
            let slow = try await check(["--worker", hanging.path, "Checkout", "--worker-timeout", "1"])
            #expect(slow.status == 70, "\(slow)")
            #expect(slow.stderr.contains("\(hanging.path) did not answer for 'Checkout' within 1.0 seconds (--worker-timeout), so it was killed: still thinking"),
                    "\(slow)")

            let flooding = try script("flooding", "#!/bin/sh\nexec yes\n", in: directory)
            let loud = try await check(["--worker", flooding.path, "Checkout"])
            #expect(loud.status == 70, "\(loud)")
            #expect(loud.stderr.contains("\(flooding.path) printed more than 64 MiB for 'Checkout', so it was killed"), "\(loud)")
        }
    }
}
