import ArgumentParser
import Foundation
import GroveCluster
import GroveOTel
import GroveWorker
import Logging

/// The shipped worker: hosts the example machines (and `Counter` for load tests) and runs their
/// io requests with in-memory handlers. Build your own the same way: register your machines and
/// handlers in a `WorkerConfiguration` and call `Worker.main`.
@main
struct FSMWorker: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fsm-worker",
        abstract: "Hosts the example machines of a Grove topology and runs their io requests.",
        usage: "fsm-worker \(Worker.usage) [--io-delay-ms MS]",
        discussion: """
            Usually started by fsm-launch; start it by hand for workers marked "external" in the topology.

            \(WorkerExitStatus.help)
            """
    )

    @OptionGroup var worker: Worker.Options

    @Option(name: .customLong("io-delay-ms"), parsing: .unconditional,
            help: ArgumentHelp("Delay each of the example io handlers' answers by MS milliseconds.", valueName: "MS"))
    var ioDelayMs = 0

    @Flag(name: .customLong("with-test-machines"), help: .hidden)
    var withTestMachines = false

    /// For Grove's own tests of cancellation: a cancelled io handler's task ends only once this
    /// file exists, so a test can see what happens while it has not ended yet.
    @Option(name: .customLong("io-cancel-gate"), help: .hidden)
    var ioCancelGate: String?

    func validate() throws {
        guard ioDelayMs >= 0 else { throw ValidationError("--io-delay-ms needs a number of milliseconds") }
        if ioCancelGate != nil, ioDelayMs == 0 {
            throw ValidationError("--io-cancel-gate holds a cancelled io handler, so it needs --io-delay-ms above 0 to cancel one")
        }
    }

    func run() async throws {
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = .notice
            return handler
        }
        // Before the worker: its runtime reads the process's tracer once, when it is made. The
        // export runs until the process exits (Worker.main never returns).
        _ = try TraceExport.start(process: "fsm-worker", name: worker.name, log: Logger(label: "grove.worker"))
        var configuration = ExampleWorker.configuration(ioDelay: .milliseconds(ioDelayMs), cancelGate: ioCancelGate)
        if withTestMachines { TestMachines.register(in: &configuration) }
        await Worker.main(configuration, options: worker)
    }

    /// As `AsyncParsableCommand`'s, but a bad command line exits with status 2 (what fsm-launch
    /// and scripts expect of a worker), help with 0 on stdout.
    static func main() async {
        do {
            let command = try parse()
            try await command.run()
        } catch {
            let code = exitCode(for: error)
            guard code != .success else { exit(withError: error) }
            FileHandle.standardError.write(Data((fullMessage(for: error) + "\n").utf8))
            Foundation.exit(2)
        }
    }
}
