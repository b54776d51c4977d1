import ArgumentParser
import Foundation
import GroveCheck
import GroveExamples

@main
struct FSMCheck: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fsm-check",
        abstract: "Explores the state graphs of the shipped example machines and reports what breaks the FSM guarantees.",
        discussion: """
            For each machine, fsm-check walks every state reachable from the initial one by the \
            machine's sample events (its Checkable conformance), running every (state, event) pair \
            twice; a machine whose transitions await (AwaitingCheckable) has each transition awaited. It reports pairs the machine returns .unhandled for and pairs that fall through (no change, no effect: a default:) \
            (completeness), pairs whose two runs differ (determinism), declared states never reached \
            (reachability), states that cannot reach a terminal state and terminal states that handle \
            an event (termination), and, for information, timer events in states where no timer sends \
            them. Events a timer sends are drawn as timeouts. States are drawn by case name.

            Output on stdout: the report (default), --mermaid or --dot for the graph, --json for the \
            whole result. Machines: \(catalog.map(\.name).joined(separator: ", ")); all of them when \
            none is named.

            Your own machines: --worker EXECUTABLE checks the machine types your worker executable \
            describes (registered with WorkerConfiguration.checkable), as it checks the shipped ones: \
            fsm-check --worker shop-worker Checkout. It runs `EXECUTABLE --describe TYPE`, which walks \
            the machine in that process and prints its graph; all its describable types when none is named. \
            A worker that takes longer than --worker-timeout (60 s) to answer, or prints more than \
            64 MiB, is killed.

            Exit status: 0 every machine is clean (with --allow-unhandled, unhandled pairs do not \
            count; with --allow-fall-through, pairs that fall through); 1 a finding; 64 usage error (unknown machine or option, a --worker that is not \
            an executable or does not describe the type); 70 the worker failed to describe a machine \
            (it crashed or printed no state graph).
            """
    )

    /// The machines fsm-check knows: every shipped example.
    static let catalog: [(name: String, explore: @Sendable (Int) async -> StateGraph)] = [
        ("LoginFlow", { StateGraph.explore(LoginFlow.self, limit: $0) }),
        ("AuthFlow", { StateGraph.explore(AuthFlow.self, limit: $0) }),
        ("AuthFlowChart", { StateGraph.explore(AuthFlowChart.self, limit: $0) }),
        ("UserForm", { StateGraph.explore(UserForm.self, limit: $0) }),
        ("DataLoader", { StateGraph.explore(DataLoader.self, limit: $0) }),
        ("PollingService", { StateGraph.explore(PollingService.self, limit: $0) }),
        ("BufferedConnection", { StateGraph.explore(BufferedConnection.self, limit: $0) }),
        ("AppNavigator", { StateGraph.explore(AppNavigator.self, limit: $0) }),
        ("Search", { StateGraph.explore(Search.self, limit: $0) }),
        ("LocationTracker", { StateGraph.explore(LocationTracker.self, limit: $0) }),
        ("UserFeature", { StateGraph.explore(UserFeature.self, limit: $0) }),
        ("AppFeature", { StateGraph.explore(AppFeature.self, limit: $0) }),
        ("RetryingFeature", { StateGraph.explore(RetryingFeature.self, limit: $0) }),
        ("DebouncedSearch", { StateGraph.explore(DebouncedSearch.self, limit: $0) }),
        ("SearchFeature", { StateGraph.explore(SearchFeature.self, limit: $0) }),
        ("LoadingStateMachine", { StateGraph.explore(LoadingStateMachine.self, limit: $0) }),
        ("PurchaseFeature", { StateGraph.explore(PurchaseFeature.self, limit: $0) }),
        ("UserPostsFeature", { StateGraph.explore(UserPostsFeature.self, limit: $0) }),
        ("CacheFeature", { StateGraph.explore(CacheFeature.self, limit: $0) }),
        ("AuthenticateFeature", { StateGraph.explore(AuthenticateFeature.self, limit: $0) }),
        ("PollingLoop", { StateGraph.explore(PollingLoop.self, limit: $0) }),
        ("NetworkFeature", { StateGraph.explore(NetworkFeature.self, limit: $0) }),
        ("RetryableFetch", { StateGraph.explore(RetryableFetch.self, limit: $0) }),
        ("SessionFeature", { StateGraph.explore(SessionFeature.self, limit: $0) }),
        ("AwaitingLoadingStateMachine", { await StateGraph.explore(awaiting: AwaitingLoadingStateMachine.self, limit: $0) }),
    ]

    @Argument(help: "Machines to check, by name; all when none.")
    var machines: [String] = []

    @Flag(help: "Print the graph as a Mermaid state diagram.")
    var mermaid = false

    @Flag(help: "Print the graph in Graphviz DOT.")
    var dot = false

    @Flag(help: "Print the result as JSON, one object per machine in an array.")
    var json = false

    @Flag(help: "Exit 0 even when pairs are unhandled (Grove machines say .unhandled on purpose).")
    var allowUnhandled = false

    @Flag(help: "Exit 0 even when pairs fall through (a dialect's default: that ignores events on purpose).")
    var allowFallThrough = false

    @Option(help: "The most concrete states to visit per machine.")
    var limit = 10_000

    @Option(help: ArgumentHelp("A worker executable (a path, or a name on PATH) whose described machines to check instead of the shipped ones.",
                               valueName: "EXECUTABLE"))
    var worker: String?

    @Option(name: .customLong("worker-timeout"),
            help: ArgumentHelp("How long a --worker may take to answer one question, in seconds, before it is killed.", valueName: "SECONDS"))
    var workerTimeoutSeconds: Double = 60

    /// ``workerTimeoutSeconds`` as a duration.
    var workerTimeout: Duration { .milliseconds(Int64(workerTimeoutSeconds * 1000)) }

    func validate() throws {
        if machines.contains("") {
            throw ValidationError("a machine name is empty; name a machine, or none for all\(worker == nil ? "" : " the worker describes")")
        }
        guard workerTimeoutSeconds > 0, workerTimeoutSeconds <= 86_400 else {
            throw ValidationError("--worker-timeout must be more than 0 and at most 86400 seconds, got \(workerTimeoutSeconds)")
        }
        let known = Set(Self.catalog.map(\.name))
        if worker == nil, let unknown = machines.first(where: { !known.contains($0) }) {
            throw ValidationError("unknown machine '\(unknown)'; fsm-check knows \(Self.catalog.map(\.name).joined(separator: ", "))")
        }
        if [mermaid, dot, json].filter({ $0 }).count > 1 {
            throw ValidationError("choose one of --mermaid, --dot and --json")
        }
        if limit < 1 { throw ValidationError("--limit must be at least 1, got \(limit)") }
    }

    func run() async throws {
        var graphs: [StateGraph] = []
        if let worker {
            do {
                graphs = try describe(by: worker)
            } catch {
                FileHandle.standardError.write(Data("\(error)\n".utf8))
                throw ExitCode(error.status)
            }
        } else {
            let selected = machines.isEmpty ? Self.catalog : Self.catalog.filter { machines.contains($0.name) }
            for machine in selected { graphs.append(await machine.explore(limit)) }
        }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            print(String(decoding: try encoder.encode(graphs), as: UTF8.self))
        } else {
            for graph in graphs {
                print(mermaid ? graph.mermaid : dot ? graph.dot : graph.report, terminator: "")
                if graph.machine != graphs.last?.machine { print() }
            }
        }
        let failing = graphs.filter { !$0.isClean(allowingUnhandled: allowUnhandled, allowingFallThrough: allowFallThrough) }
        if !failing.isEmpty { throw ExitCode(1) }
    }
}
