import Foundation
import Testing

extension EndToEnd {
    /// A runtime directory too long for the default topology's socket paths (107 bytes at most)
    /// is an error that names `GROVE_RUNTIME_DIR`, from fsm-launch and fsm-send alike; it trapped
    /// (exit 132, a backtrace) while the default topology was checked once for the process.
    @Suite(.timeLimit(.minutes(2)))
    struct RuntimeDirectoryTests {
        @Test func aRuntimeDirectoryTooLongForASocketIsAnErrorNotATrap() async throws {
            let directory = try Cluster.makeDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let runtime = directory.appendingPathComponent(String(repeating: "r", count: max(1, 100 - directory.path.utf8.count)))
            try FileManager.default.createDirectory(at: runtime, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            let environment = ["GROVE_RUNTIME_DIR": runtime.path, "XDG_STATE_HOME": directory.path + "/state"]

            let check = try await runCommand(Products.launch, ["--check"], in: directory, environment: environment)
            #expect(check.status == 2, "\(check)")
            #expect(check.stderr.contains("set GROVE_RUNTIME_DIR to a shorter directory") && !check.stderr.contains("Fatal error"), "\(check)")

            let launch = try await runCommand(Products.launch, [], in: directory, environment: environment)
            #expect(launch.status == 2 && !launch.stderr.contains("Fatal error"), "\(launch)")

            let send = try await runCommand(Products.send, ["list", "--timeout", "1"], in: directory, environment: environment)
            #expect(send.status != 0 && send.status != 132 && !send.stderr.contains("Fatal error"), "\(send)")
            #expect(send.stderr.contains("107"), "the error says what is too long: \(send)")
        }
    }
}

extension EndToEnd.RuntimeDirectoryTests {
    /// A clean stop leaves no socket files behind in the runtime directory (they stayed after
    /// SIGTERM: libzmq removes them only when its context is terminated), and the next launch in
    /// the same directory starts.
    @Test func aStoppedLaunchLeavesNoSocketFiles() async throws {
        let directory = try Cluster.makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let runtime = directory.path + "/run"
        let environment = ["GROVE_RUNTIME_DIR": runtime, "XDG_STATE_HOME": directory.path + "/state"]
        func sockets() -> [String] {
            let own = runtime + "/default"
            return ((try? FileManager.default.contentsOfDirectory(atPath: own)) ?? []).filter { name in
                var status = stat()
                return lstat(own + "/" + name, &status) == 0 && status.st_mode & S_IFMT == S_IFSOCK
            }.sorted()
        }
        for launchNumber in 1...2 {
            let launch = try await ChildProcess(Products.launch, [], outputIn: directory, label: "fsm-launch \(launchNumber)",
                                                environment: environment)
            defer { launch.stop() }
            try await eventually("fsm-launch \(launchNumber) to be ready", timeout: .seconds(30)) {
                launch.stdout.contains("ready ") ? true : nil
            }
            #expect(sockets() == ["clients", "events", "workers"], "launch \(launchNumber) bound its sockets")
            #expect(await launch.stopped(), "fsm-launch \(launchNumber) stops on SIGTERM")
            #expect(sockets().isEmpty, "launch \(launchNumber) left socket files: \(sockets())")
        }
    }
}
