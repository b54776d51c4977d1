/// A Codable request that an effect handler executes, in this process or another one.
///
/// Declare one type per kind of I/O, with the response it produces:
/// ```swift
/// struct FetchItems: IORequest {
///     typealias Response = [Item]
///     var page: Int
/// }
/// ```
/// Handlers are registered by name (``name``), which must be the same in every process of a
/// topology.
///
/// A request that may safely run twice (a fetch, a poll) can ask to be sent again when its
/// machine is restored from a store while it was in flight:
/// ```swift
/// extension FetchItems {
///     static var onInterruption: IOInterruption { .reissue }
/// }
/// ```
public protocol IORequest: Codable, Sendable {
    /// What the handler returns on success.
    associatedtype Response: Codable & Sendable
    /// The name handlers are registered under. Defaults to the type's name.
    static var name: String { get }
    /// What a machine restored while this request was in flight gets: an
    /// ``IOFailure/Code/interrupted`` failure (``IOInterruption/fail``, the default) or the
    /// request sent again (``IOInterruption/reissue``).
    static var onInterruption: IOInterruption { get }
}

extension IORequest {
    public static var name: String { String(describing: Self.self) }
    public static var onInterruption: IOInterruption { .fail }
}

/// What happens to an io request that was in flight when its machine's worker stopped (crashed,
/// was killed or restarted) and the machine was restored from its store. Each request type
/// declares it (``IORequest/onInterruption``).
public enum IOInterruption: Sendable, Hashable {
    /// At most once: the machine hears an ``IOFailure/Code/interrupted`` failure instead of a
    /// result, and decides (retry, or tell the user). The request may or may not have run.
    /// The default, and the only safe choice for requests with effects that must not happen
    /// twice (a payment, a sign-in that counts failed attempts).
    case fail
    /// At least once: the request is sent again after recovery, under its original effect id
    /// (so `.cancel(id)` still reaches it), and its result maps to an event as the first one's
    /// would have. The handler may run twice for one request, or more when the worker stops
    /// again: for idempotent requests (a fetch, a poll).
    case reissue
}

/// Why an io request produced no response. Always delivered to the machine as data, never thrown
/// past it, so a machine decides what a failure means. Equality compares codes only: the message
/// is for people.
public struct IOFailure: Error, Codable, Sendable, Hashable, CustomStringConvertible {
    /// The kind of failure. Extend it with codes of your own for your handlers.
    public struct Code: RawRepresentable, Codable, Sendable, Hashable {
        /// The code as it crosses process boundaries, e.g. `"handler-failed"`.
        public var rawValue: String
        /// A code; prefer the named ones.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// No handler is registered for the request's name.
        public static let noHandler = Code(rawValue: "no-handler")
        /// The handler threw an error.
        public static let handlerFailed = Code(rawValue: "handler-failed")
        /// The process running the handler went away before answering.
        public static let workerLost = Code(rawValue: "worker-lost")
        /// The worker that runs the machine lost its coordinator (killed, restarted, or silent
        /// for the heartbeat timeout) while the request ran elsewhere: its result cannot arrive.
        public static let coordinatorLost = Code(rawValue: "coordinator-lost")
        /// The request or response could not be encoded or decoded.
        public static let codec = Code(rawValue: "codec")
        /// The machine's worker stopped (crashed, was killed or restarted) while the request was
        /// in flight; the machine was restored from its store and hears this instead of a result.
        /// The request may or may not have run.
        public static let interrupted = Code(rawValue: "interrupted")
        /// The request ran longer than its timeout (the topology's `io[].timeoutMs`, else
        /// `ioLimits.timeoutMs`): the machine stopped waiting and the task running the handler
        /// was cancelled. The request may or may not have taken effect.
        public static let timeout = Code(rawValue: "timeout")
        /// Every worker that could run the request already runs as many io calls as the topology
        /// allows (`ioLimits.concurrentPerWorker`); it was not started. Retry later.
        public static let busy = Code(rawValue: "busy")
    }

    /// What kind of failure this is.
    public var code: Code
    /// What happened and what to do about it, for people.
    public var message: String

    /// A failure with `code`, explained by `message`.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public static func == (lhs: IOFailure, rhs: IOFailure) -> Bool { lhs.code == rhs.code }

    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    public var description: String { "\(code.rawValue): \(message)" }

    /// What a machine hears for request `name` in flight when its worker restarted.
    package static func interrupted(_ name: String) -> IOFailure {
        IOFailure(.interrupted, "the worker running this machine restarted while '\(name)' was in flight; "
            + "it may or may not have run: check before repeating it")
    }
}

/// Something that can execute io requests: local handlers, or a link to a remote worker.
@usableFromInline
package protocol IOPerformer: Sendable {
    func perform<R: IORequest>(_ request: R) async -> Result<R.Response, IOFailure>
    /// Runs `request` for the effect `effect` of one machine; performers that report or route
    /// work per effect (the cluster's) use the id, local handlers ignore it.
    func perform<R: IORequest>(_ request: R, effect: EffectID) async -> Result<R.Response, IOFailure>
}

extension IOPerformer {
    @usableFromInline
    package func perform<R: IORequest>(_ request: R, effect: EffectID) async -> Result<R.Response, IOFailure> {
        await perform(request)
    }
}

/// A type-erased io request together with the mapping of its result to an event.
@usableFromInline package struct IOCall<M: Machine>: Sendable {
    package let requestName: String
    package let request: any IORequest
    package let run: @Sendable (any IOPerformer, EffectID) async -> M.Event
    /// The event the machine hears instead of a result when its worker restarts while the
    /// request is in flight: the result mapped from an ``IOFailure/Code/interrupted`` failure.
    package let interrupted: @Sendable () -> M.Event
    /// What the request's type declares for a restart while it is in flight.
    package let onInterruption: IOInterruption

    init<R: IORequest>(_ request: R, result: @escaping @Sendable (Result<R.Response, IOFailure>) -> M.Event) {
        self.requestName = R.name
        self.request = request
        self.run = { performer, effect in result(await performer.perform(request, effect: effect)) }
        self.interrupted = { result(.failure(.interrupted(R.name))) }
        self.onInterruption = R.onInterruption
    }

    /// A call whose request type was erased by a dialect (SwiftTea's `.io`).
    init(requestName: String, request: any IORequest, run: @escaping @Sendable (any IOPerformer, EffectID) async -> M.Event,
         interrupted: @escaping @Sendable () -> M.Event, onInterruption: IOInterruption) {
        self.requestName = requestName
        self.request = request
        self.run = run
        self.interrupted = interrupted
        self.onInterruption = onInterruption
    }
}
