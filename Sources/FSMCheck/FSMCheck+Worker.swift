import ArgumentParser
import Foundation
import GroveCheck

extension FSMCheck {
    /// The graphs of `machines` (all it describes when none is named) as the worker executable
    /// `path` walks them (`--describe TYPE`); its failures end fsm-check with what was wrong.
    func describe(by path: String) throws(WorkerExecutable.Failure) -> [StateGraph] {
        let executable = try WorkerExecutable(path)
        let names = machines.isEmpty ? try executable.describableTypes() : machines
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

    /// `name` as a path when it has a `/`, else looked up on `PATH` as a shell does.
    init(_ name: String) throws(Failure) {
        let candidates = name.contains("/") ? [name]
            : (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map { "\($0)/\(name)" }
        guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            let what = FileManager.default.fileExists(atPath: name) ? "is not executable" : name.contains("/") ? "does not exist" : "is not on PATH"
            throw .usage("--worker \(name) \(what): give the path of a worker executable built with Worker.main, e.g. --worker .build/debug/shop-worker")
        }
        path = found
    }

    /// `--describe-machines`: the names the worker describes.
    func describableTypes() throws(Failure) -> [String] {
        let output = try run(["--describe-machines"], asking: "its describable machines")
        do {
            return try JSONDecoder().decode([String].self, from: output)
        } catch {
            throw .worker("\(path) --describe-machines printed no list of names (\(error)); it printed: \(Self.excerpt(output))")
        }
    }

    /// `--describe TYPE`: the machine's graph, walked by the worker.
    func graph(of type: String, limit: Int) throws(Failure) -> StateGraph {
        let output = try run(["--describe", type, "--describe-limit", String(limit)], asking: "'\(type)'")
        do {
            return try JSONDecoder().decode(StateGraph.self, from: output)
        } catch {
            throw .worker("\(path) --describe \(type) printed no state graph (\(error)); it printed: \(Self.excerpt(output))")
        }
    }

    /// Runs the worker with `arguments` and returns its stdout; an exit status other than 0 is a
    /// failure that carries its stderr (64, a type it does not describe, is a usage error).
    private func run(_ arguments: [String], asking what: String) throws(Failure) -> Data {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        let stdout = Pipe(), stderr = Pipe()
        process.standardOutput = stdout
        process.standardError = stderr
        process.standardInput = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            throw .usage("cannot run \(path): \(error)")
        }
        // Both pipes drained at once: a worker that fills one while fsm-check waits on the other
        // would never end.
        let errors = ErrorCollector(stderr.fileHandleForReading)
        let output = stdout.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        // Its own "error: " prefix would follow ours ("error: … does not describe …: error: …").
        var said = errors.text().trimmingCharacters(in: .whitespacesAndNewlines)
        if said.hasPrefix("error: ") { said.removeFirst("error: ".count) }
        let status = process.terminationStatus
        switch process.terminationReason {
        case .exit:
            switch status {
            case 0: return output
            case 64: throw .usage("\(path) does not describe \(what): \(said)")
            case 2:
                throw .usage("\(path) did not understand --describe: is it a worker built with Worker.main, on a Grove that describes machines? It said: \(said)")
            default: throw .worker("\(path) failed to describe \(what) (exit status \(status)): \(said)")
            }
        case .uncaughtSignal: throw .worker("\(path) was killed by signal \(status) while describing \(what): \(said)")
        @unknown default: throw .worker("\(path) ended with status \(status) while describing \(what): \(said)")
        }
    }

    /// The start of what a worker printed, for an error message.
    private static func excerpt(_ data: Data) -> String {
        let text = String(decoding: data.prefix(200), as: UTF8.self)
        return text.isEmpty ? "nothing" : "'\(text)'" + (data.count > 200 ? "…" : "")
    }
}

/// Reads a pipe to its end on a thread of its own.
private final class ErrorCollector: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    private var data = Data()  // written by the reading thread before `done`, read after it

    init(_ handle: FileHandle) {
        Thread { [self] in
            data = handle.readDataToEndOfFile()
            done.signal()
        }.start()
    }

    func text() -> String {
        done.wait()
        return String(decoding: data, as: UTF8.self)
    }
}
