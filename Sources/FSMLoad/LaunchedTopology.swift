import Foundation

/// A topology started by fsm-load itself: `fsm-launch` as a child process, stopped at the end.
final class LaunchedTopology {
    let process = Process()
    let endpoint: String
    /// Where its coordinator serves metrics (the `metrics <url>` line), when the topology sets
    /// `metrics.listen`.
    let metricsURL: String?

    init(topology: String, launcher: URL) throws {
        process.executableURL = launcher
        // --exit-with-parent: even an fsm-load killed with SIGKILL leaves no topology behind.
        process.arguments = [topology, "--log-level", "warning", "--exit-with-parent", "--parent-pid", String(getpid())]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.standardError
        try process.run()
        let sources = Self.stopOnSignals(process)
        var buffer = Data()
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break } // fsm-launch exited
            buffer.append(chunk)
            let lines = String(decoding: buffer, as: UTF8.self).split(separator: "\n")
            if let line = lines.first(where: { $0.hasPrefix("ready ") }) {
                endpoint = String(line.dropFirst("ready ".count))
                // Printed before the ready line.
                metricsURL = lines.first { $0.hasPrefix("metrics ") }.map { String($0.dropFirst("metrics ".count)) }
                signalSources = sources
                return
            }
        }
        for source in sources { source.cancel() }
        process.terminate()
        process.waitUntilExit()
        throw LoadError("fsm-launch \(topology) did not print its ready line; see its errors above")
    }

    var pid: Int32 { process.processIdentifier }

    /// Handlers that must live as long as the topology does.
    private var signalSources: [any DispatchSourceSignal] = []

    /// SIGINT, SIGTERM or SIGHUP to fsm-load stop the topology it launched before it exits, so
    /// no fsm-launch (and no worker) is left holding the endpoints.
    private static func stopOnSignals(_ process: Process) -> [any DispatchSourceSignal] {
        var sources: [any DispatchSourceSignal] = []
        for number in [SIGINT, SIGTERM, SIGHUP] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                if process.isRunning {
                    process.terminate()
                    let deadline = Date().addingTimeInterval(5)
                    while process.isRunning, Date() < deadline { usleep(20_000) }
                    if process.isRunning { kill(process.processIdentifier, SIGKILL) }
                }
                exit(128 + number)
            }
            source.resume()
            sources.append(source)
        }
        return sources
    }

    func stop() {
        guard process.isRunning else { return }
        process.terminate()
        process.waitUntilExit()
    }
}

struct LoadError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
