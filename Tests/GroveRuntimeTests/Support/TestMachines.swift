import Grove
import GroveRuntime

/// A machine whose events exercise every effect kind. Tests control the work through `Env`.
enum Probe: Machine {
    struct State: Equatable, Sendable, Codable, Terminable {
        var log: [String] = []
        var done = false
        var isTerminal: Bool { done }
    }

    enum Event: Equatable, Sendable, Codable {
        case note(String)
        case inline([String])
        case nestedInline
        case finish
        case finishWith([String])
        case startTask(id: String?, value: String)
        /// A task that waits for the gate named `value`, ignoring cancellation, then reports.
        case startGated(id: String?, value: String)
        /// Work whose result is sent from a detached task, where cancellation is invisible.
        case startDetached(id: String, value: String)
        case startTimer(id: String, seconds: Int, value: String)
        case cancel(String)
        case cancelAll
        case sequence(id: String, steps: [Step])
        case stream(id: String)
        case failing(mapped: Bool)
        case emit(String)
        case unknown
        /// A merge whose second child replaces the first (same id) and whose third is anonymous.
        case mergeReplacingSibling
    }

    enum Step: Equatable, Sendable, Codable {
        case gated(String)
        case timer(seconds: Int, value: String)
        case note(String)
    }

    struct Env: Sendable {
        var gate = Gate()
        /// Opened with the value after a detached result was handed to the host.
        var delivered = Gate()
        /// Each stream effect gets its elements from here; `onTermination` opens "<id>-ended".
        var streamElements: @Sendable (String) -> [String] = { _ in [] }
        var keepStreamsOpen = false
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
        case .nestedInline:
            state.log.append("nested")
            return .events(.inline(["a1", "a2"]), .note("b"))
        case .finish:
            state.done = true
            return .none
        case .finishWith(let texts):
            state.done = true
            return .merge([.output("final"), .events(texts.map(Event.note)), .task { _ in .note("late") }])
        case .startTask(let id, let value):
            return .task(id: id.map { EffectID($0) }) { _ in .note(value) }
        case .startGated(let id, let value):
            return .task(id: id.map { EffectID($0) }) { env in
                await env.gate.wait(value)
                return .note(value)
            }
        case .startDetached(let id, let value):
            return .operation(id: EffectID(id)) { env, send in
                let sender = Task.detached {
                    await env.gate.wait(value)
                    try? send(.note(value))
                    env.delivered.open(value)
                }
                await sender.value
            }
        case .startTimer(let id, let seconds, let value):
            return .after(.seconds(seconds), id: EffectID(id), send: .note(value))
        case .cancel(let id):
            return .cancel(EffectID(id))
        case .cancelAll:
            return .cancelAll
        case .sequence(let id, let steps):
            return .sequence(steps.map(effect(for:)), id: EffectID(id))
        case .stream(let id):
            return .stream(id: EffectID(id)) { env in
                AsyncStream<Event> { continuation in
                    for element in env.streamElements(id) { continuation.yield(.note(element)) }
                    continuation.onTermination = { _ in env.gate.open("\(id)-ended") }
                    if !env.keepStreamsOpen { continuation.finish() }
                }
            }
        case .failing(let mapped):
            let policy: Effect.ErrorPolicy = mapped ? .map { _ in .note("mapped failure") } : .fail
            return .task(id: "failing", onError: policy) { _ in throw Failure() }
        case .emit(let text):
            return .output(text)
        case .unknown:
            return .unhandled
        case .mergeReplacingSibling:
            return .merge([
                .task(id: "x") { env in
                    await env.gate.wait("first")
                    return .note("first")
                },
                .task(id: "x") { _ in .note("second") },
                .task { _ in .note("third") },
            ], id: "group")
        }
    }

    private static func effect(for step: Step) -> Effect {
        switch step {
        case .gated(let value):
            .task { env in
                await env.gate.wait(value)
                return .note(value)
            }
        case .timer(let seconds, let value):
            .after(.seconds(seconds), send: .note(value))
        case .note(let value):
            .events(.note(value))
        }
    }
}

/// A machine that starts in a terminal state.
enum AlreadyDone: Machine {
    struct State: Equatable, Sendable, Terminable {
        var isTerminal: Bool { true }
    }
    typealias Event = String
    typealias Output = String
    static var initialState: State { State() }
    static var initialOutput: String? { "nothing to do" }
    static func update(_ state: inout State, event: String) -> Effect { .none }
}

/// Diagnostics reduced to what tests compare.
enum DiagnosticSummary: Equatable, Sendable {
    case unhandled(Probe.Event)
    case effectFailed(EffectID)
    case dropped([Probe.Event])
    case overflow(Probe.Event)
    case skipped(Int)
    case reissueNotKept(EffectID)
    case postponeIgnored
}

typealias DiagnosticLog = Gate.Box<[DiagnosticSummary]>

/// Options for a probe host that record every diagnostic into `log`.
func probeOptions(capacity: Int = 1024, log: DiagnosticLog) -> HostOptions<Probe> {
    HostOptions(address: "probe", mailboxCapacity: capacity) { diagnostic in
        let summary: DiagnosticSummary = switch diagnostic {
        case .unhandled(_, let event): .unhandled(event)
        case .effectFailed(let id, _): .effectFailed(id)
        case .eventsDropped(let events, _): .dropped(events)
        case .mailboxOverflow(let event): .overflow(event)
        case .effectsSkippedAtTermination(let count): .skipped(count)
        case .reissueNotKept(let id, _): .reissueNotKept(id)
        case .postponeIgnored: .postponeIgnored
        }
        log.mutate { $0.append(summary) }
    }
}
