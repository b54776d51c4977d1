import Foundation

/// A topology started by fsm-load itself: `fsm-launch` as a child process, stopped at the end.
final class LaunchedTopology {
    let process = Process()
    let endpoint: String

    init(topology: String, launcher: URL) throws {
        process.executableURL = launcher
        process.arguments = [topology, "--log-level", "warning"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.standardError
        try process.run()
        var buffer = Data()
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break } // fsm-launch exited
            buffer.append(chunk)
            if let line = String(decoding: buffer, as: UTF8.self).split(separator: "\n").first(where: { $0.hasPrefix("ready ") }) {
                endpoint = String(line.dropFirst("ready ".count))
                return
            }
        }
        process.terminate()
        process.waitUntilExit()
        throw LoadError("fsm-launch \(topology) did not print its ready line; see its errors above")
    }

    var pid: Int32 { process.processIdentifier }

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
