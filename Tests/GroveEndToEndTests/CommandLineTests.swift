import Foundation
import Testing

extension EndToEnd {
    /// The tools' command lines: a bad value is refused before anything runs, saying which and
    /// why (exit 64); help goes to stdout; a worker nobody welcomes says so.
    @Suite(.timeLimit(.minutes(2)))
    struct CommandLineTests {
        /// A negative number is read as the option's value (and refused for what it is), not as
        /// a missing value or an unknown option.
        @Test(arguments: [
            (["state", "auth", "--timeout", "-1"], "--timeout must be a number of seconds above 0"),
            (["state", "auth", "--timeout", "0"], "--timeout must be a number of seconds above 0"),
            (["state", "auth", "--timeout", "1e300"], "at most 1000000, e.g. --timeout 0.5; got 1e+300"),
            (["state", "auth", "--timeout", "nan"], "--timeout must be a number of seconds above 0"),
            (["watch", "--duration", "-2"], "--duration must be a number of seconds above 0"),
            (["watch", "--count", "0"], "--count must be at least 1"),
            (["watch", "--count", "-3"], "--count must be at least 1"),
            (["state", "auth", "--route", "fast"], "--route (or FSM_ROUTE) must be coordinator or direct; got 'fast'"),
            // Options written before the subcommand are moved after it, values with them.
            (["--route", "sideways", "locate", "counter"], "must be coordinator or direct; got 'sideways'"),
        ])
        func fsmSendRefusesBadValues(arguments: [String], says: String) async throws {
            let directory = try Cluster.makeDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let result = try await runCommand(Products.send, arguments + ["--endpoint", "ipc://\(directory.path)/nobody"], in: directory)
            #expect(result.status == 64)
            #expect(result.stderr.contains(says), "\(result.stderr)")
        }

        /// A Z85 key may start with `-`: it is read as the option's value, not as an option.
        @Test func aCoordinatorKeyStartingWithADashIsItsValue() async throws {
            let directory = try Cluster.makeDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let key = "-" + String(repeating: "a", count: 39)
            for tool in [Products.send, Products.load] {
                let arguments = tool == Products.send ? ["list"] : [directory.appendingPathComponent("none.json").path]
                let result = try await runCommand(tool, arguments + ["--coordinator-key", key], in: directory)
                #expect(!result.stderr.contains("Missing value"), "\(tool): \(result.stderr)")
                #expect(!result.stderr.contains("Unknown option"), "\(tool): \(result.stderr)")
            }
        }

        @Test(arguments: ["-1", "0", "1e21", "nan"])
        func fsmLaunchRefusesAReadyTimeoutOutOfRange(value: String) async throws {
            let directory = try Cluster.makeDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let result = try await runCommand(Products.launch, ["--check", "--ready-timeout", value], in: directory)
            #expect(result.status == 64)
            #expect(result.stderr.contains("--ready-timeout must be a number of seconds above 0 and at most 1000000"), "\(result.stderr)")
        }

        /// A worker executable that is not there is named with its place in the topology file
        /// (the first group is external, so the index shows it is counted from the file).
        @Test func aMissingWorkerExecutableIsNamedWithItsJSONPath() async throws {
            let directory = try Cluster.makeDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let file = directory.appendingPathComponent("missing.json")
            try Data("""
                { "name": "missing",
                  "coordinator": { "clients": "ipc://\(directory.path)/c", "workers": "ipc://\(directory.path)/w", "events": "ipc://\(directory.path)/e" },
                  "workers": [ { "name": "outside", "external": true }, { "name": "gone", "executable": "no-such-grove-worker" } ],
                  "machines": [ { "name": "counter", "type": "Counter", "worker": "gone" } ] }
                """.utf8).write(to: file)
            let result = try await runCommand(Products.launch, [file.path], in: directory)
            #expect(result.status == 1)
            #expect(result.stderr.contains("worker executable 'no-such-grove-worker' not found"), "\(result.stderr)")
            #expect(result.stderr.contains("fix $.workers[1].executable"), "\(result.stderr)")
        }

        @Test func fsmWorkerHelpGoesToStdoutWithEveryOption() async throws {
            let directory = try Cluster.makeDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let result = try await runCommand(Products.worker, ["--help"], in: directory)
            #expect(result.status == 0)
            for option in ["--name NAME", "--coordinator ENDPOINT", "--exit-with-parent", "--parent-pid PID", "--io-delay-ms MS"] {
                #expect(result.stdout.contains(option), "\(result.stdout)")
            }
            #expect(result.stderr.isEmpty, "\(result.stderr)")
        }

        /// The exit statuses, from the enum the code uses (SendExitStatusTests ties it to the README).
        @Test func fsmSendHelpSaysEveryExitStatus() async throws {
            let directory = try Cluster.makeDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let result = try await runCommand(Products.send, ["--help"], in: directory)
            #expect(result.status == 0)
            let help = result.stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
            for said in ["Exit status: 0 success; 2 bad input", "; 4 forbidden (", "; 64 a usage error", "; 1 anything else ("] {
                #expect(help.contains(said), "\(said): \(result.stdout)")
            }
        }

        @Test func fsmWorkerHelpSaysEveryExitStatus() async throws {
            let directory = try Cluster.makeDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let result = try await runCommand(Products.worker, ["--help"], in: directory)
            #expect(result.status == 0)
            let help = result.stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
            for said in ["Exit statuses (final: not restarted by default):", "0 stopped as asked", "74 the store or the audit log failed",
                         "78 rejected by the coordinator"] {
                #expect(help.contains(said), "\(said): \(result.stdout)")
            }
        }

        /// A worker pointed at an endpoint no coordinator binds keeps trying, and says so.
        @Test func aWorkerNobodyWelcomesSaysWhereItIsWaiting() async throws {
            let directory = try Cluster.makeDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let endpoint = "ipc://\(directory.path)/nobody"
            let worker = try await ChildProcess(Products.worker, ["--name", "ghost", "--coordinator", endpoint], outputIn: directory, label: "worker")
            defer { _ = worker.stop() }
            try await eventually("the worker says it is not registered", timeout: .seconds(20)) {
                worker.stderr.contains("not registered yet: no welcome from a coordinator at \(endpoint)") ? true : nil
            }
            #expect(worker.isRunning)
        }

        /// A worker started with SIGTERM ignored and blocked, as a launcher that handles SIGTERM
        /// itself passes them on through exec, still stops on SIGTERM, and by stopping itself
        /// (exit 0), not by dying of the signal.
        @Test func aWorkerStartedWithSigtermIgnoredAndBlockedStopsOnIt() async throws {
            let directory = try Cluster.makeDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let endpoint = "ipc://\(directory.path)/nobody"
            let launcher = """
                import os, signal, sys
                signal.signal(signal.SIGTERM, signal.SIG_IGN)
                signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
                os.execv(sys.argv[1], sys.argv[1:])
                """
            let worker = try await ChildProcess(URL(fileURLWithPath: "/usr/bin/env"),
                                                ["python3", "-c", launcher, Products.worker.path, "--name", "stubborn", "--coordinator", endpoint],
                                                outputIn: directory, label: "worker")
            defer { _ = worker.stop() }
            // Running its loop (a SIGTERM earlier would find the default action, not its handling).
            try await eventually("the worker says it is not registered", timeout: .seconds(20)) {
                worker.stderr.contains("not registered yet") ? true : nil
            }
            worker.signal(SIGTERM)
            let status = await worker.waitForExit(timeout: .seconds(10))
            #expect(status == 0, "\(worker.stderr)")
        }
    }
}
