import Foundation
import GroveCluster
import GroveClient
import GroveCoordinator
import GroveWorker
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
        (["--describe", "Checkout", "--describe-machines"], "choose one of --describe TYPE and --describe-machines"),
        (["--describe", ""], "--describe needs a machine type"),
        (["--describe", "Checkout", "--describe-limit", "0"], "--describe-limit needs a number of states of at least 1"),
        (["--name", "a", "--coordinator", "c", "--describe-limit", "5"], "--describe-limit only means something with --describe TYPE"),
    ])
    func badCommandLinesSayWhatIsWrong(arguments: [String], says: String) {
        let error = #expect(throws: Worker.WorkerUsageError.self) { try Worker.Options(arguments: arguments) }
        #expect(error?.message.contains(says) == true, "\(String(describing: error?.message))")
    }

    // MARK: - Written by the type that reads it

    /// Every option set, each to a value that is not its default (the coordinator key starts
    /// with `-`, as a Z85 key may, and the key file is `-`, standard input, as fsm-launch gives).
    static var everyOption: Worker.Options {
        var options = Worker.Options(name: "edge-1", coordinator: "ipc:///run/t/w", exitWithParent: true, parentPid: 4242,
                                     dataDirectory: "/srv/grove/data")
        options.auditDirectory = "/srv/grove/audit"
        options.keyFile = "-"
        options.coordinatorKey = "-Ab.3:+=^!/*?&<>()[]{}@%$#Ab.3:+=^!/*?&<"
        options.storePasswordFile = "/srv/grove/postgres.password"
        options.direct = "ipc:///run/t/direct/edge-1.00000000000000ff"
        return options
    }

    /// The options ArgumentParser knows for `Worker.Options` (its help lists each one), but help.
    static var declaredOptions: Set<String> {
        let lines = Worker.Options.helpMessage(includeHidden: true, columns: 1000).split(separator: "\n")
        return Set(lines.compactMap { line -> String? in
            let words = line.split(separator: " ")
            guard let first = words.first, first.hasPrefix("--"), first != "--help" else { return nil }
            return String(first)
        })
    }

    /// The option names in a command line (`--name value` and `--name=value`).
    static func optionNames(_ arguments: [String]) -> Set<String> {
        Set(arguments.filter { $0.hasPrefix("--") }.map { String($0.prefix { $0 != "=" }) })
    }

    @Test func renderedOptionsReadBackEqual() throws {
        let options = Self.everyOption
        let read = try Worker.Options(arguments: options.arguments)
        #expect(read.name == options.name && read.coordinator == options.coordinator)
        #expect(read.exitWithParent && read.parentPid == 4242)
        #expect(read.dataDirectory == "/srv/grove/data" && read.auditDirectory == "/srv/grove/audit")
        #expect(read.keyFile == "-" && read.coordinatorKey == options.coordinatorKey)
        #expect(read.direct == options.direct)
        #expect(read.arguments == options.arguments)
    }

    /// The options of a worker asked to describe a machine rather than run (`--describe`).
    static var describing: [Worker.Options] {
        var one = Worker.Options(name: "edge-1", coordinator: "ipc:///run/t/w")
        one.describe = "Checkout"
        one.describeLimit = 50
        var all = Worker.Options(name: "edge-1", coordinator: "ipc:///run/t/w")
        all.describeMachines = true
        return [one, all]
    }

    /// A new option that `arguments` does not write fails here, so fsm-launch cannot forget it.
    @Test func everyDeclaredOptionIsRendered() throws {
        let declared = Self.declaredOptions
        #expect(declared.count >= 11, "\(declared)")
        let rendered = ([Self.everyOption] + Self.describing).map { Self.optionNames($0.arguments) }
        #expect(rendered.reduce(Set()) { $0.union($1) } == declared)
        for options in Self.describing {
            let read = try Worker.Options(arguments: options.arguments)
            #expect(read.arguments == options.arguments)
        }
    }

    /// `--describe` asks for a description, not a worker: nothing to connect to, so no name or
    /// coordinator; `Worker.main` answers it and exits (WorkerDescribeTests).
    @Test func aDescriptionNeedsNoNameOrCoordinator() throws {
        let one = try Worker.Options(arguments: ["--describe", "Checkout", "--describe-limit", "50"])
        #expect(one.isDescribing && one.describe == "Checkout" && one.describeLimit == 50)
        let all = try Worker.Options(arguments: ["--describe-machines"])
        #expect(all.isDescribing && all.describe == nil)
        let worker = try Worker.Options(arguments: ["--name", "a", "--coordinator", "c"])
        #expect(!worker.isDescribing && !Worker.Options(name: "a", coordinator: "c").isDescribing)
    }

    @Test func onlyWhatWasGivenIsRendered() throws {
        let options = Worker.Options(name: "a", coordinator: "c")
        #expect(options.arguments == ["--name", "a", "--coordinator", "c"])
        let read = try Worker.Options(arguments: options.arguments)
        #expect(read.dataDirectory == DataDirectory.standard().path && !read.exitWithParent && read.keyFile == nil)
    }

    /// fsm-launch's order, which a worker's `ps` line shows (the group's own arguments follow).
    @Test func theOrderIsFsmLaunchs() {
        var options = Worker.Options(name: "w", coordinator: "ipc:///x", exitWithParent: true, parentPid: 7, dataDirectory: "/d")
        options.auditDirectory = "/a"
        options.keyFile = "-"
        options.coordinatorKey = "KEY"
        #expect(options.arguments == ["--name", "w", "--coordinator", "ipc:///x", "--exit-with-parent", "--parent-pid", "7",
                                      "--data-dir", "/d", "--audit-dir", "/a", "--key-file", "-", "--coordinator-key", "KEY"])
    }

    @Test func theUsageNamesEveryOption() {
        let usage = Worker.usage.split(separator: " ").map { $0.trimmingCharacters(in: CharacterSet(charactersIn: "[]")) }
        #expect(Self.optionNames(usage) == Self.declaredOptions, "\(Worker.usage)")
    }

}
