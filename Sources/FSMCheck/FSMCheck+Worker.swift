import ArgumentParser
import Foundation
import GroveCheck

extension FSMCheck {
    /// The graphs of `machines` (all it describes when none is named) as the worker executable
    /// `path` walks them (`--describe TYPE`); its failures end fsm-check with what was wrong.
    func describe(by path: String) throws(WorkerExecutable.Failure) -> [StateGraph] {
        let executable = try WorkerExecutable(path, timeout: workerTimeout)
        // A name given twice is described once.
        var seen: Set<String> = []
        let names = (machines.isEmpty ? try executable.describableTypes() : machines).filter { seen.insert($0).inserted }
        if names.isEmpty {
            throw WorkerExecutable.Failure.usage("\(executable.path) describes no machine: register one with `worker.checkable(MyMachine.self)` (a Checkable type)")
        }
        var graphs: [StateGraph] = []
        for name in names { graphs.append(try executable.graph(of: name, limit: limit)) }
        return graphs
    }
}

/// A worker executable asked to describe its machines: it runs once per question and answers on
/// stdout (JSON), with its errors on stderr.
struct WorkerExecutable {
    /// What went wrong, as fsm-check reports it: a usage error (64) or a worker that failed (70).
    enum Failure: Error, CustomStringConvertible {
        case usage(String)
        case worker(String)

        var description: String {
            switch self {
            case .usage(let message), .worker(let message): "error: \(message)"
            }
        }

        var status: Int32 {
            switch self {
            case .usage: 64
            case .worker: 70
            }
        }
    }

    let path: String
    /// How long one question may take before the worker is killed.
    let timeout: Duration

    /// The most a worker may print on stdout for one answer: a state graph of the default
    /// 10,000 states is a few megabytes. A worker that prints more is killed.
    static let outputCap = 64 << 20
    /// How much of a worker's stderr is kept for the error message; the rest is read and dropped.
    static let errorCap = 64 << 10

    /// `name` as a path when it has a `/`, else looked up on `PATH` as a shell does.
    init(_ name: String, timeout: Duration) throws(Failure) {
        self.timeout = timeout
        let files = FileManager.default
        let candidates = name.contains("/") ? [name]
            : (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map { "\($0)/\(name)" }
        let hint = "give the path of a worker executable built with Worker.main, e.g. --worker .build/debug/shop-worker"
        guard let found = candidates.first(where: { files.isExecutableFile(atPath: $0) && !Self.isDirectory($0) }) else {
            if !name.contains("/"), files.fileExists(atPath: name), !Self.isDirectory(name) {
                // As a shell, fsm-check does not look in the current directory for a bare name.
                throw .usage("--worker \(name) is not on PATH; did you mean --worker ./\(name)?")
            }
            let what = Self.isDirectory(name) ? "is a directory"
                : files.fileExists(atPath: name) ? "is not executable" : name.contains("/") ? "does not exist" : "is not on PATH"
            throw .usage("--worker \(name) \(what): \(hint)")
        }
        path = found
    }

    private static func isDirectory(_ path: String) -> Bool {
        var directory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &directory) && directory.boolValue
    }

    /// `--describe-machines`: the names the worker describes.
    func describableTypes() throws(Failure) -> [String] {
        let output = try run(["--describe-machines"], asking: "its describable machines")
        do {
            return try JSONDecoder().decode([String].self, from: output)
        } catch {
            throw .worker("\(path) --describe-machines printed no list of names (\(Self.reason(error))); it printed \(Self.excerpt(output)). "
                + Self.notAWorker)
        }
    }

    /// `--describe TYPE`: the machine's graph, walked by the worker.
    func graph(of type: String, limit: Int) throws(Failure) -> StateGraph {
        let output = try run(["--describe", type, "--describe-limit", String(limit)], asking: "'\(type)'")
        do {
            return try JSONDecoder().decode(StateGraph.self, from: output)
        } catch {
            throw .worker("\(path) --describe \(type) printed no state graph (\(Self.reason(error))); it printed \(Self.excerpt(output)). "
                + Self.notAWorker)
        }
    }

    /// Runs the worker with `arguments` and returns its stdout; an exit status other than 0 is a
    /// failure that carries its stderr (64, a type it does not describe, is a usage error). A
    /// worker that takes longer than ``timeout`` or prints more than ``outputCap`` is killed.
    private func run(_ arguments: [String], asking what: String) throws(Failure) -> Data {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        let stdout = Pipe(), stderr = Pipe()
        process.standardOutput = stdout
        process.standardError = stderr
        process.standardInput = FileHandle.nullDevice
        let ended = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in ended.signal() }
        do {
            try process.run()
        } catch {
            let posix = (error as NSError).userInfo[NSUnderlyingErrorKey] as? NSError ?? (error as NSError)
            let why = posix.domain == NSPOSIXErrorDomain && posix.code == Int(ENOEXEC)
                ? "it is not a program this system can run (exec format error: a script without a #! line, or built for another system)"
                : error.localizedDescription
            throw .usage("cannot run \(path): \(why); give a worker executable built with Worker.main")
        }
        // Both pipes drained at once, each on a thread of its own: a worker that fills one while
        // fsm-check waits on the other would never end.
        let pid = process.processIdentifier
        let output = PipeReader(stdout.fileHandleForReading, cap: Self.outputCap) { kill(pid, SIGKILL) }
        let errors = PipeReader(stderr.fileHandleForReading, cap: Self.errorCap, onOverflow: nil)
        let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
        let timedOut = ended.wait(timeout: .now() + seconds) == .timedOut
        if timedOut {
            kill(pid, SIGKILL)
            // Foundation may report the end only once children the worker started let go of its
            // pipes; what follows needs no more of it.
            _ = ended.wait(timeout: .now() + 2)
        }
        // Its own "error: " prefix would follow ours ("error: … does not describe …: error: …").
        // A killed worker's children may hold its stderr open: then what it said is not awaited.
        var said = (timedOut ? errors.text(within: 2) : errors.text())?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        if said.hasPrefix("error: ") { said.removeFirst("error: ".count) }
        let saying = said.isEmpty ? ", and said nothing on stderr" : ": \(said)"
        if timedOut {
            throw .worker("\(path) did not answer for \(what) within \(timeout) (--worker-timeout), so it was killed\(saying)")
        }
        let data = output.data()
        if output.overflowed {
            throw .worker("\(path) printed more than \(Self.outputCap >> 20) MiB for \(what), so it was killed: "
                + "is it a Grove worker? A machine that large needs a lower --limit")
        }
        let status = process.terminationStatus
        switch process.terminationReason {
        case .exit:
            switch status {
            case 0: return data
            case 64: throw .usage("\(path) does not describe \(what)\(saying)")
            case 2:
                throw .usage("\(path) did not understand --describe\(saying). \(Self.notAWorker)")
            default: throw .worker("\(path) failed to describe \(what) (exit status \(status))\(saying). \(Self.notAWorker)")
            }
        case .uncaughtSignal: throw .worker("\(path) was killed by signal \(status) while describing \(what)\(saying)")
        @unknown default: throw .worker("\(path) ended with status \(status) while describing \(what)\(saying)")
        }
    }

    /// What to do about an answer that is no description.
    private static let notAWorker = "It is not a Grove worker, or was built by an older Grove: rebuild it against this fsm-check's Grove"

    /// The start of what a worker printed, for an error message.
    private static func excerpt(_ data: Data) -> String {
        let text = String(decoding: data.prefix(200), as: UTF8.self)
        return text.isEmpty ? "nothing" : "'\(text)'" + (data.count > 200 ? "…" : "")
    }

    /// Why an answer did not decode, in a few words rather than a `DecodingError`'s dump.
    private static func reason(_ error: any Error) -> String {
        guard let error = error as? DecodingError else { return "\(error)" }
        func at(_ path: [any CodingKey]) -> String {
            path.isEmpty ? "" : " at " + path.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
        }
        switch error {
        case .keyNotFound(let key, let context): return "no '\(key.stringValue)'\(at(context.codingPath))"
        case .typeMismatch(_, let context), .valueNotFound(_, let context):
            return "unexpected \(context.codingPath.isEmpty ? "value" : "value\(at(context.codingPath))")"
        case .dataCorrupted(let context): return context.codingPath.isEmpty ? "not JSON" : "bad value\(at(context.codingPath))"
        @unknown default: return "\(error)"
        }
    }
}

/// Reads a pipe to its end on a thread of its own, keeping at most `cap` bytes; past the cap it
/// calls `onOverflow` once (to kill the writer), or keeps reading and dropping.
private final class PipeReader: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    // Written by the reading thread before `done`, read after it.
    private var kept = Data()
    private var over = false

    init(_ handle: FileHandle, cap: Int, onOverflow: (@Sendable () -> Void)?) {
        Thread { [self] in
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                if kept.count + chunk.count > cap {
                    kept.append(chunk.prefix(cap - kept.count))
                    if !over { onOverflow?() }
                    over = true
                } else {
                    kept.append(chunk)
                }
            }
            done.signal()
        }.start()
    }

    /// Everything kept, once the pipe has ended.
    func data() -> Data {
        done.wait()
        done.signal()
        return kept
    }

    /// `true` when more than the cap came.
    var overflowed: Bool {
        _ = data()
        return over
    }

    func text() -> String? { String(decoding: data(), as: UTF8.self) }

    /// What came, when the pipe ends within `seconds`; `nil` otherwise.
    func text(within seconds: Double) -> String? {
        guard done.wait(timeout: .now() + seconds) == .success else { return nil }
        done.signal()
        return String(decoding: kept, as: UTF8.self)
    }
}
