import Foundation
import Grove
import GroveCheck
import GroveCluster
import GroveExamples
import GroveWorker
import Testing

/// A worker asked to describe its machines (`--describe TYPE`, `--describe-machines`): what it
/// prints and the status it exits with, decided without a process (`Worker.describe`).
@Suite(.timeLimit(.minutes(2))) struct WorkerDescribeTests {
    static var configuration: WorkerConfiguration {
        var worker = WorkerConfiguration()
        worker.register(OakTransducer<LoginFlow>.self, as: "LoginFlow")
        worker.checkable(LoginFlow.self)
        worker.register(DataLoader.self, as: "Loader")
        worker.checkable(DataLoader.self, as: "Loader")
        worker.register(Tally.self)
        worker.checkable(awaiting: AwaitingLoadingStateMachine.self)
        return worker
    }

    static func describe(_ arguments: [String], in configuration: WorkerConfiguration = configuration) async throws -> DescribeAnswer {
        await Worker.describe(configuration, try Worker.Options(arguments: arguments))
    }

    @Test func describesAMachineAsTheWalkFindsIt() async throws {
        let answer = try await Self.describe(["--describe", "LoginFlow"])
        #expect(answer.status == .stopped && answer.stderr.isEmpty, "\(answer)")
        let graph = try JSONDecoder().decode(StateGraph.self, from: Data(answer.stdout.utf8))
        #expect(graph == StateGraph.explore(LoginFlow.self))
    }

    @Test func aMachineRegisteredUnderAnotherNameIsDescribedUnderIt() async throws {
        let answer = try await Self.describe(["--describe", "Loader", "--describe-limit", "2"])
        let graph = try JSONDecoder().decode(StateGraph.self, from: Data(answer.stdout.utf8))
        #expect(graph.machine == "Loader")
        #expect(graph.truncated && graph.exploredStates <= 3, "the limit reaches the walk: \(graph.exploredStates) states")
    }

    @Test func anAwaitingMachineIsDescribedAwaited() async throws {
        let answer = try await Self.describe(["--describe", "AwaitingLoadingStateMachine"])
        let graph = try JSONDecoder().decode(StateGraph.self, from: Data(answer.stdout.utf8))
        #expect(graph == (await StateGraph.explore(awaiting: AwaitingLoadingStateMachine.self)))
    }

    @Test func listsTheDescribableMachines() async throws {
        let answer = try await Self.describe(["--describe-machines"])
        #expect(answer.status == .stopped)
        #expect(try JSONDecoder().decode([String].self, from: Data(answer.stdout.utf8)) == ["AwaitingLoadingStateMachine", "Loader", "LoginFlow"])
    }

    @Test func aMachineWithCaseIterableEventsIsDescribedWithoutACheckableConformance() async throws {
        var worker = WorkerConfiguration()
        worker.checkable(machine: Switch.self)
        worker.checkable(machine: Switch.self, as: "Breaker")
        #expect(worker.checkableTypes == ["Breaker", "Switch"])
        let answer = try await Self.describe(["--describe", "Breaker"], in: worker)
        #expect(answer.status == .stopped, "\(answer)")
        let graph = try JSONDecoder().decode(StateGraph.self, from: Data(answer.stdout.utf8))
        #expect(graph.machine == "Breaker" && graph.reachable == ["off", "on"] && graph.unreachable == ["tripped"])
    }

    @Test func anUnknownTypeIsAUsageErrorNamingTheDescribableOnes() async throws {
        let unknown = try await Self.describe(["--describe", "Nope"])
        #expect(unknown.status == .usage && unknown.stdout.isEmpty)
        #expect(unknown.stderr == "error: no describable machine type 'Nope' in this worker; it describes AwaitingLoadingStateMachine, Loader, LoginFlow.\n")

        let hostedOnly = try await Self.describe(["--describe", "Tally"])
        #expect(hostedOnly.status == .usage)
        #expect(hostedOnly.stderr.contains("It hosts 'Tally', but no Checkable description of it: add `worker.checkable(Tally.self)`"))
        #expect(hostedOnly.stderr.contains("when that type has another name (a dialect's, or a machine registered `as: \"Tally\"`), "
            + "`worker.checkable(ItsType.self, as: \"Tally\")`."), "\(hostedOnly)")

        let none = try await Self.describe(["--describe", "Nope"], in: WorkerConfiguration())
        #expect(none.stderr.contains("it describes none (WorkerConfiguration.checkable(_:) makes a machine describable)"), "\(none)")
    }
}

/// A machine a worker hosts without describing it: no `Checkable` conformance.
private enum Tally: Machine {
    enum Event: Sendable, Codable { case add(Int) }
    static var initialState: Int { 0 }
    static func update(_ state: inout Int, event: Event) -> Effect {
        switch event {
        case .add(let amount): state += amount
        }
        return .none
    }
}

/// A machine described by its cases alone: `CaseIterable` events and states, no `Checkable`.
private enum Switch: Machine {
    enum State: Sendable, CaseIterable { case off, on, tripped }
    enum Event: Sendable, CaseIterable { case flip }
    static var initialState: State { .off }
    static func update(_ state: inout State, event: Event) -> Effect {
        state = state == .off ? .on : .off
        return .none
    }
}
