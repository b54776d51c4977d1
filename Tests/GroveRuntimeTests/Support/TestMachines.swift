import Grove

/// A counter whose events exercise every effect kind. Tests configure the work through `Env`.
enum Probe: Machine {
    struct State: Equatable, Sendable, Codable, Terminable {
        var log: [String] = []
        var done = false
        var isTerminal: Bool { done }
    }

    enum Event: Equatable, Sendable, Codable {
        case note(String)
        case inline([String])
        case finish
        case finishWith([String])
        case startTask(id: String?, value: String)
        case startBlocking(id: String)
        case startTimer(id: String, seconds: Int, value: String)
        case cancel(String)
        case cancelAll
        case sequence(id: String, steps: [Step])
        case stream(id: String)
        case failing(mapped: Bool)
        case emit(String)
        case unknown
    }

    enum Step: Equatable, Sendable, Codable {
        case task(String)
        case timer(seconds: Int, value: String)
        case note(String)
    }

    struct Env: Sendable {
        var taskResult: @Sendable (String) async throws -> String = { $0 }
        var block: @Sendable () async -> Void = {}
        var stream: @Sendable () -> AsyncStream<String> = { AsyncStream { $0.finish() } }
    }

    struct Failure: Error, Equatable {}

    typealias Output = String

    static var initialState: State { State() }

    static func update(_ state: inout State, event: Event) -> Effect {
        switch event {
        case .note(let text):
            state.log.append(text)
            return .none
        case .inline(let texts):
            state.log.append("inline")
            return .events(texts.map(Event.note))
        case .finish:
            state.done = true
            return .none
        case .finishWith(let texts):
            state.done = true
            return .merge([
                .output("final"),
                .events(texts.map(Event.note)),
                .task { _ in .note("late") },
            ])
        case .startTask(let id, let value):
            return .task(id: id.map { EffectID($0) }) { env in .note(try await env.taskResult(value)) }
        case .startBlocking(let id):
            return .task(id: EffectID(id)) { env in
                await env.block()
                return .note("unblocked \(id)")
            }
        case .startTimer(let id, let seconds, let value):
            return .after(.seconds(seconds), id: EffectID(id), send: .note(value))
        case .cancel(let id):
            return .cancel(EffectID(id))
        case .cancelAll:
            return .cancelAll
        case .sequence(let id, let steps):
            return .sequence(steps.map { step in
                switch step {
                case .task(let value): .task { env in .note(try await env.taskResult(value)) }
                case .timer(let seconds, let value): .after(.seconds(seconds), send: .note(value))
                case .note(let value): .events(.note(value))
                }
            }, id: EffectID(id))
        case .stream(let id):
            return .stream(id: EffectID(id)) { env in env.stream().map(Event.note) }
        case .failing(let mapped):
            let policy: Effect.ErrorPolicy = mapped ? .map { _ in .note("mapped failure") } : .fail
            return .task(id: "failing", onError: policy) { _ in throw Failure() }
        case .emit(let text):
            return .output(text)
        case .unknown:
            return .unhandled
        }
    }
}
