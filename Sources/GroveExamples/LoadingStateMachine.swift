public import Grove
public import GroveRuntime

/// Loads a value by id: the StateMachinePackage example, a ``StateMachine`` closure whose side
/// effect comes from an injected ``Load``, run as an ``AsyncStateMachine`` whose states a UI
/// iterates, or by type (``StaticStateMachine``) on a worker, where its side effect is ``Load/demo``.
///
/// ```swift
/// let machine = LoadingStateMachine.asyncStateMachine(load: Load { id in try await api.value(id) })
/// Task { for await state in machine { render(state) } }
/// try machine.send(.loadingWasRequested(id: "3"))
/// ```
public enum LoadingStateMachine {
    /// Where the loading is.
    public enum State: Codable, Sendable, Equatable {
        /// Nothing requested yet.
        case idle
        /// A load is in flight.
        case loading
        /// The load succeeded.
        case loaded(value: Int)
        /// The load failed; a new request tries again.
        case failed(message: String)
    }

    /// Requests and what the load reports. On the wire, `loadingWasRequested` is also read as
    /// `loadingwasRequested`, the spelling of seed 003's `Event`, so a seed user's JSON decodes.
    public enum Event: Codable, Sendable, Equatable {
        /// Load the value with this id, from `idle` or after a failure.
        case loadingWasRequested(id: String)
        /// The load succeeded.
        case loadingHasSucceeded(value: Int)
        /// The load failed.
        case loadingHasFailed(message: String)
    }

    /// The side effect that loads a value: wraps the loading function the app injects.
    public struct Load: Sendable {
        /// Loads the value with an id.
        public let loadFunction: @Sendable (String) async throws -> Int

        public init(_ loadFunction: @escaping @Sendable (String) async throws -> Int) {
            self.loadFunction = loadFunction
        }

        /// The side effect loading `id`; errors become `loadingHasFailed`.
        public func callAsFunction(id: String) -> SideEffect<State, Event> {
            SideEffect(id: "load") {
                do {
                    return .loadingHasSucceeded(value: try await loadFunction(id))
                } catch {
                    return .loadingHasFailed(message: "\(error)")
                }
            }
        }
    }

    /// The machine, with its side effect injected.
    public static func makeStateMachine(load: Load) -> StateMachine<State, Event> {
        makeSynchronousStateMachine(load: load).stateMachine
    }

    /// The same machine, typed as one whose transitions never await, so that a program can
    /// host it by type.
    public static func makeSynchronousStateMachine(load: Load) -> SynchronousStateMachine<State, Event> {
        SynchronousStateMachine(initial: .idle) { state, event in
            switch (state, event) {
            case (.idle, .loadingWasRequested(let id)), (.failed, .loadingWasRequested(let id)):
                return .newState(.loading, output: load(id: id))
            case (.loading, .loadingHasSucceeded(let value)):
                return .newState(.loaded(value: value))
            case (.loading, .loadingHasFailed(let message)):
                return .newState(.failed(message: message))
            default:
                return .sameState()
            }
        }
    }

    /// The machine running in a host, as an async sequence of its states.
    public static func asyncStateMachine(load: Load) -> AsyncStateMachine<State, Event> {
        AsyncStateMachine(makeStateMachine(load: load))
    }
}

extension LoadingStateMachine.Event {
    /// The cases as they may arrive: Event's own, and the seed's spelling of the request.
    /// Decoding reads these; encoding stays Event's own (`loadingWasRequested`).
    private enum Wire: Decodable {
        case loadingWasRequested(id: String)
        case loadingwasRequested(id: String)
        case loadingHasSucceeded(value: Int)
        case loadingHasFailed(message: String)
    }

    public init(from decoder: any Decoder) throws {
        switch try Wire(from: decoder) {
        case .loadingWasRequested(let id), .loadingwasRequested(let id): self = .loadingWasRequested(id: id)
        case .loadingHasSucceeded(let value): self = .loadingHasSucceeded(value: value)
        case .loadingHasFailed(let message): self = .loadingHasFailed(message: message)
        }
    }
}

extension LoadingStateMachine: StateMachineProgram {
    /// The machine with ``Load/demo``, so that it can be hosted by type:
    /// `worker.register(StaticStateMachine<LoadingStateMachine>.self, as: "LoadingStateMachine")`.
    public static var stateMachine: SynchronousStateMachine<State, Event> { makeSynchronousStateMachine(load: .demo) }
}

extension LoadingStateMachine.Load {
    /// Loads without a service: the value of an id that is a number is that number times ten;
    /// any other id fails with ``DemoLoadError``. An id written `slow:N` takes five seconds to
    /// load N's value, long enough to kill its worker in the middle of it and see what comes back.
    public static let demo = LoadingStateMachine.Load { id in
        var id = Substring(id)
        if id.hasPrefix("slow:") {
            id = id.dropFirst("slow:".count)
            try await Task.sleep(for: .seconds(5))
        }
        guard let number = Int(id) else { throw DemoLoadError(id: String(id)) }
        return number * 10
    }
}

/// Why ``LoadingStateMachine/Load/demo`` could not load an id.
public struct DemoLoadError: Error, CustomStringConvertible {
    /// The id that is not a number.
    public var id: String
    public var description: String { "no value for id '\(id)': the demo loader knows numbers only" }
}
