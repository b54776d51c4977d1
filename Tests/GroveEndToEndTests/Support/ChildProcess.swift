import Foundation
import Synchronization

/// A process the harness started, with stdout and stderr going to files so that nothing blocks
/// on a full pipe and everything stays readable after the fact.
final class ChildProcess: @unchecked Sendable {
    // @unchecked: `process` is only used to start and signal; its state is mirrored in `status`.
    let pid: Int32
    let arguments: [String]
    let stdoutURL: URL
    let stderrURL: URL
    private let process: Process
    private let status = ExitBox()

    /// Starts `executable` (from a thread of its own: see ``runWithDefaultSignals(_:)``), with
    /// the test process's environment and `environment` over it.
    /// - Throws: When the files cannot be created or the process cannot start.
    init(_ executable: URL, _ arguments: [String], outputIn directory: URL, label: String,
         environment: [String: String] = [:]) async throws {
        let stamp = UUID().uuidString.prefix(8)
        stdoutURL = directory.appendingPathComponent("\(label)-\(stamp).out")
        stderrURL = directory.appendingPathComponent("\(label)-\(stamp).err")
        for url in [stdoutURL, stderrURL] {
            guard FileManager.default.createFile(atPath: url.path, contents: nil) else {
                throw HarnessError("cannot create \(url.path)")
            }
        }
        let out = try FileHandle(forWritingTo: stdoutURL)
        let err = try FileHandle(forWritingTo: stderrURL)
        defer {
            try? out.close()
            try? err.close()
        }
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        // Relative paths a test hands a child (key files, say) start in the test's directory.
        process.currentDirectoryURL = directory
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = out
        process.standardError = err
        let status = status
        process.terminationHandler = { finished in
            let code = finished.terminationStatus
            status.value.withLock { $0 = code }
        }
        try await Self.runWithDefaultSignals(process)
        self.process = process
        self.pid = process.processIdentifier
        self.arguments = [executable.lastPathComponent] + arguments
    }

    /// Starts `process` from a thread that blocks no signals. A child inherits the signal mask
    /// of the thread that spawns it, and the threads running Swift tasks block SIGTERM and
    /// friends: a child spawned from one would ignore SIGTERM, and fsm-launch would be tested
    /// under conditions no shell ever creates.
    /// The test's task waits without holding a thread of the pool.
    private static func runWithDefaultSignals(_ process: Process) async throws {
        let process = UncheckedBox(process)
        try await onDedicatedThread {
            var none = sigset_t()
            sigemptyset(&none)
            pthread_sigmask(SIG_SETMASK, &none, nil)
            return Result { try process.value.run() }
        }.get()
    }

    /// The exit status (or terminating signal) once the process has ended.
    var exitStatus: Int32? { status.value.withLock { $0 } }
    var isRunning: Bool { exitStatus == nil }

    var stdout: String { (try? String(contentsOf: stdoutURL, encoding: .utf8)) ?? "" }
    var stderr: String { (try? String(contentsOf: stderrURL, encoding: .utf8)) ?? "" }

    func signal(_ number: Int32) {
        if isRunning { kill(pid, number) }
    }

    /// Waits (without blocking a thread of the test's executor) for the process to end.
    /// - Returns: The exit status, or `nil` when it was still running at the deadline.
    func waitForExit(timeout: Duration) async -> Int32? {
        let deadline = ContinuousClock.now + timeout
        while isRunning, ContinuousClock.now < deadline, !Task.isCancelled {
            try? await Task.sleep(for: .milliseconds(10))
        }
        return exitStatus
    }

    /// As ``stop(grace:)``, waiting on a thread of its own instead of one of the test pool's.
    /// Not cancellable either: it runs to the end in a test past its time limit too.
    @discardableResult
    func stopped(grace: Duration = .seconds(5)) async -> Bool {
        await onDedicatedThread { self.stop(grace: grace) }
    }

    /// SIGTERM, then SIGKILL after `grace`; waits until the process is gone, blocking the
    /// calling thread (for `defer`; async code uses ``stopped(grace:)``). Safe from cleanup
    /// code: it does not depend on the current task not being cancelled.
    /// - Returns: `true` when SIGTERM was enough.
    @discardableResult
    func stop(grace: Duration = .seconds(5)) -> Bool {
        guard isRunning else { return true }
        kill(pid, SIGTERM)
        if waitBlocking(timeout: grace, { !isRunning }) { return true }
        kill(pid, SIGKILL)
        _ = waitBlocking(timeout: .seconds(5)) { !isRunning }
        return false
    }
}

/// The exit status, shared with the termination handler.
private final class ExitBox: Sendable {
    let value = Mutex<Int32?>(nil)
}

/// What a finished command printed.
struct CommandResult: CustomStringConvertible {
    var status: Int32
    var stdout: String
    var stderr: String

    var description: String {
        "exit \(status)\nstdout: \(stdout.trimmingCharacters(in: .whitespacesAndNewlines))\nstderr: \(stderr.trimmingCharacters(in: .whitespacesAndNewlines))"
    }
}

/// Runs a command to completion, with `environment` over the test process's.
/// - Throws: ``HarnessError`` when it is still running after `timeout` (it is killed then).
func runCommand(_ executable: URL, _ arguments: [String], in directory: URL, timeout: Duration = .seconds(20),
                environment: [String: String] = [:]) async throws -> CommandResult {
    let child = try await ChildProcess(executable, arguments, outputIn: directory, label: executable.lastPathComponent,
                                       environment: environment)
    return try await child.result(within: timeout, what: child.arguments.joined(separator: " "))
}

extension ChildProcess {
    /// Waits for the process to finish and gives what it printed, its output files removed.
    /// - Throws: ``HarnessError`` naming `what` when it is still running after `timeout` (it is
    ///   killed then).
    func result(within timeout: Duration, what: String) async throws -> CommandResult {
        defer {
            try? FileManager.default.removeItem(at: stdoutURL)
            try? FileManager.default.removeItem(at: stderrURL)
        }
        guard let status = await waitForExit(timeout: timeout) else {
            await stopped(grace: .milliseconds(200))
            throw HarnessError("\(what) did not finish within \(timeout); stderr: \(stderr)")
        }
        return CommandResult(status: status, stdout: stdout, stderr: stderr)
    }
}

/// Runs blocking work (waiting for processes, sleeping between polls) on a thread of its own,
/// so that it never holds one of the few threads Swift concurrency runs the tests on. Not
/// cancellable: cleanup that uses it runs to the end.
func onDedicatedThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        Thread { continuation.resume(returning: body()) }.start()
    }
}

/// Carries a value that is not `Sendable` to the one thread that uses it next.
private struct UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
