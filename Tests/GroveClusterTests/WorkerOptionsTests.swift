import Foundation
import GroveCluster
import Testing

/// A worker's command line, as fsm-launch writes it and as people type it (read by
/// ArgumentParser: `Worker.Options` is the options group every worker executable shares).
@Suite(.timeLimit(.minutes(2))) struct WorkerOptionsTests {
    @Test func readsWhatFsmLaunchPasses() throws {
        let options = try Worker.Options(arguments: ["--name", "edge-1", "--coordinator", "ipc:///run/t/w",
                                                     "--exit-with-parent", "--parent-pid", "4242"])
        #expect(options.name == "edge-1" && options.coordinator == "ipc:///run/t/w")
        #expect(options.exitWithParent && options.parentPid == 4242)
    }

    @Test func theParentIsOptional() throws {
        let options = try Worker.Options(arguments: ["--name", "a", "--coordinator", "ipc:///run/t/w", "--exit-with-parent"])
        #expect(options.exitWithParent && options.parentPid == nil)
    }

    @Test func theDataDirectoryIsGivenOrTheStandardOne() throws {
        let given = try Worker.Options(arguments: ["--name", "a", "--coordinator", "c", "--data-dir", "/srv/grove/orders/"])
        #expect(given.dataDirectory == "/srv/grove/orders")
        let relative = try Worker.Options(arguments: ["--name", "a", "--coordinator", "c", "--data-dir", "state"])
        #expect(relative.dataDirectory == FileManager.default.currentDirectoryPath + "/state")
        let standard = try Worker.Options(arguments: ["--name", "a", "--coordinator", "c"])
        #expect(standard.dataDirectory == DataDirectory.standard().path)
        #expect(standard.dataDirectory.hasSuffix("/grove"))
    }

    @Test func helpIsAnEmptyUsageError() {
        let error = #expect(throws: Worker.WorkerUsageError.self) { try Worker.Options(arguments: ["--help"]) }
        #expect(error?.message == "")
        #expect(error?.description.contains(Worker.usage) == true)
    }

    @Test(arguments: [
        (["--name", "a", "--coordinator", "c", "--parent-pid", "7"], "--parent-pid only means something with --exit-with-parent"),
        (["--name", "a", "--coordinator", "c", "--exit-with-parent", "--parent-pid", "-3"], "--parent-pid needs a process id"),
        (["--name", "a", "--coordinator", "c", "--exit-with-parent", "--parent-pid"], "Missing value for '--parent-pid <PID>'"),
        (["--name", "a", "--coordinator", "c", "--colour", "red"], "Unknown option '--colour'"),
        (["--coordinator", "c"], "missing --name NAME (the worker instance name from the topology)"),
        (["--name", "a"], "missing --coordinator ENDPOINT"),
        (["--name", "a", "--coordinator", "c", "--data-dir", ""], "--data-dir needs a directory"),
    ])
    func badCommandLinesSayWhatIsWrong(arguments: [String], says: String) {
        let error = #expect(throws: Worker.WorkerUsageError.self) { try Worker.Options(arguments: arguments) }
        #expect(error?.message.contains(says) == true, "\(String(describing: error?.message))")
    }
}
