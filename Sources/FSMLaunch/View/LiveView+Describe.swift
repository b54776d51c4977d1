import Foundation
import GroveCluster
import GroveView
import GroveWire
import Logging

extension LiveView {
    /// How long one worker executable may take to describe a machine type.
    static let describeTimeout: TimeInterval = 30
    /// The most a description may print (fsm-check's cap).
    static let describeCap = 64 << 20

    /// Each machine type's state graph, as the executable of the group hosting it describes it
    /// (`--describe TYPE`, what `fsm-check --worker` reads). A type its worker does not describe
    /// (no `worker.checkable`) has none: the page says so and draws no graph. Run once, as the
    /// view starts, on its own thread, until `stop`; a description never starts a worker.
    static func describe(_ topology: Topology, executableDirectory: URL, until stop: StopFlag, log: Logger) -> [String: JSONValue] {
        var graphs: [String: JSONValue] = [:]
        for (type, groupName) in ViewTopology.describedTypes(topology) {
            guard !stop.isSet else { break }
            guard let group = topology.workers.first(where: { $0.name == groupName }), !group.external,
                  let executable = Supervisor.findExecutable(group.executable, besides: executableDirectory) else { continue }
            do {
                graphs[type] = try run(executable, ["--describe", type])
            } catch {
                log.info("the live view draws no graph for \(type): \(error)")
            }
        }
        return graphs
    }

    struct DescribeFailure: Error, CustomStringConvertible {
        var description: String
    }

    /// Runs `executable arguments` and parses what it printed as JSON.
    private static func run(_ executable: URL, _ arguments: [String]) throws -> JSONValue {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        let stdout = Pipe()
        process.standardOutput = stdout
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let pid = process.processIdentifier
        let timer = DispatchWorkItem { kill(pid, SIGKILL) }
        DispatchQueue.global().asyncAfter(deadline: .now() + describeTimeout, execute: timer)
        var output = Data()
        while true {
            let chunk = stdout.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            output.append(chunk)
            if output.count > describeCap { kill(pid, SIGKILL) }
        }
        process.waitUntilExit()
        timer.cancel()
        guard process.terminationReason == .exit, process.terminationStatus == 0 else {
            throw DescribeFailure(description: "\(executable.path) --describe \(arguments.last ?? "") ended with status \(process.terminationStatus)"
                + (process.terminationStatus == 64 ? " (it does not describe that type: worker.checkable)" : ""))
        }
        guard output.count <= describeCap, let graph = try? JSONValue(parsing: output) else {
            throw DescribeFailure(description: "\(executable.path) --describe \(arguments.last ?? "") printed no graph")
        }
        return graph
    }
}
