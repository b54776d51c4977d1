import Foundation
import GroveCluster
import Logging

/// The shipped worker: hosts the example machines (and `Counter` for load tests) and runs their
/// io requests with in-memory handlers. Build your own the same way: register your machines and
/// handlers in a `WorkerConfiguration` and call `Worker.main`.
@main
enum FSMWorker {
    static func main() async {
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = .notice
            return handler
        }
        var arguments = Array(CommandLine.arguments.dropFirst())
        var delay = Duration.zero
        if let index = arguments.firstIndex(of: "--io-delay-ms") {
            guard index + 1 < arguments.count, let milliseconds = Int(arguments[index + 1]), milliseconds >= 0 else {
                FileHandle.standardError.write(Data("error: --io-delay-ms needs a number of milliseconds\n".utf8))
                exit(2)
            }
            delay = .milliseconds(milliseconds)
            arguments.removeSubrange(index...(index + 1))
        }
        await Worker.main(ExampleWorker.configuration(ioDelay: delay), arguments: arguments, moreUsage: """
            fsm-worker also takes:
              --io-delay-ms MS   delay each of the example io handlers' answers by MS milliseconds (default 0)
            """)
    }
}
