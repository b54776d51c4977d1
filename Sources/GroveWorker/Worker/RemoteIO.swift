import Grove
import GroveCluster
import GroveRuntime
@_spi(GroveInternal) import GroveWire
import Synchronization
import Tracing

/// The way into the worker's core for what a machine sends on its own, its io calls to other
/// workers and its outputs: from the machine's task onto the worker loop, into
/// ``WorkerRuntime``, which asks ``WorkerCore`` what to send (`WorkerRuntime+Machines.swift`).
/// The runtime makes it and hands it to every host it makes (``HostWiring``), attaching itself
/// before any machine exists. Holds the runtime weakly: the runtime holds the inlet.
final class CoreInlet: Sendable {
    private struct Attached { weak var runtime: WorkerRuntime? }
    private let attached = Mutex(Attached())

    func attach(_ runtime: WorkerRuntime) {
        attached.withLock { $0.runtime = runtime }
    }

    private var runtime: WorkerRuntime? { attached.withLock { $0.runtime } }

    /// Sends an `io-request` (its payload: the head, then the request's bytes) and waits for
    /// its result; a cancelled task is answered `cancelled` at once.
    /// - Parameter traced: The payload starts with a trace context (``TraceParent``).
    func call(address: String, payload: [UInt8], binary: Bool, traced: Bool = false) async -> IOCallResult {
        guard let runtime else { return Self.stopped }
        return await runtime.call(address: address, payload: payload, binary: binary, traced: traced)
    }

    /// Runs `request` with the worker's own `handlers`, under its timeout; without a runtime
    /// (the worker is stopping) the handler runs unwatched.
    func local<R: IORequest>(_ request: R, address: String, handlers: IOHandlers) async -> Result<R.Response, IOFailure> {
        guard let runtime else { return await handlers.perform(request) }
        return await runtime.runLocal(address: address, request: R.name, failing: { .failure($0) }) {
            await handlers.perform(request)
        }
    }

    /// Sends a machine's output for the coordinator to publish and route.
    func output(_ output: OutputEvent, address: String) async {
        guard let runtime, let payload = try? WireJSON.encode(output) else { return }
        await runtime.output(address: address, payload: payload)
    }

    static let stopped = IOCallResult.failure(.init(code: "cancelled",
        message: "the worker is stopping; its machines' io calls no longer reach other workers"))
}

/// The io performer of one hosted machine: runs requests with the worker's own handlers unless
/// the topology places them on another worker, in which case they travel as `io-request`. Both
/// kinds time out: local calls by the worker's core, remote ones by the coordinator's.
///
/// Its address and the worker's ``ClusterIO``, shared by the instances made under one welcome:
/// three words, which an `any IOPerformer` holds in place (a performer of all six fields was
/// boxed, an allocation and a free per instance, and copied with a retain of each).
struct ClusterIOPerformer: IOPerformer {
    let address: String
    let shared: ClusterIO

    init(address: String, shared: ClusterIO) {
        self.address = address
        self.shared = shared
    }

    init(address: String, local: IOHandlers, remoteNames: Set<String>, core: CoreInlet, metrics: WorkerMetrics? = nil,
         tracing: WireTracing? = nil) {
        self.init(address: address, shared: ClusterIO(local: local, remoteNames: remoteNames, core: core, metrics: metrics, tracing: tracing))
    }

    var local: IOHandlers { shared.local }
    var remoteNames: Set<String> { shared.remoteNames }
    var core: CoreInlet { shared.core }
    var metrics: WorkerMetrics? { shared.metrics }
    var tracing: WireTracing? { shared.tracing }

    func perform<R: IORequest>(_ request: R) async -> Result<R.Response, IOFailure> {
        await perform(request, effect: .generated(0))
    }

    func perform<R: IORequest>(_ request: R, effect: EffectID) async -> Result<R.Response, IOFailure> {
        guard let metrics, metrics.isOn else { return await call(request, effect: effect) }
        let started = WorkerMetrics.nanoseconds()
        let result = await call(request, effect: effect)
        let failure: String?
        switch result {
        case .success: failure = nil
        case .failure(let error): failure = error.code.rawValue
        }
        metrics.ioCall(request: R.name, failure: failure, seconds: Double(WorkerMetrics.nanoseconds() &- started) / 1e9)
        return result
    }

    private func call<R: IORequest>(_ request: R, effect: EffectID) async -> Result<R.Response, IOFailure> {
        guard remoteNames.contains(R.name) else { return await core.local(request, address: address, handlers: local) }
        // Encoded once, here; decoded once, by the worker that runs it. The coordinator reads
        // only the head.
        if let tracing, let parent = ServiceContext.current {
            // Under the transition that started it (`WorkerRuntime+Tracing.swift`): a span for
            // the call, whose traceparent the request carries to the worker that runs it.
            let span = tracing.tracer.startSpan("io-request \(R.name)", context: parent, ofKind: .client)
            span.attributes["grove.address"] = address
            defer { span.end() }
            return await call(request, effect: effect, trace: tracing.traceparent(of: span.context))
        }
        return await call(request, effect: effect, trace: nil)
    }

    private func call<R: IORequest>(_ request: R, effect: EffectID, trace: [UInt8]?) async -> Result<R.Response, IOFailure> {
        var payload: [UInt8] = []
        if let trace { TraceParent.write(trace, into: &payload) }
        let binary: Bool
        do {
            try IOCallHead.write(name: R.name, effect: try WireJSON.encode(effect), into: &payload)
            binary = try IOBody.encode(request, into: &payload)
        } catch {
            return .failure(IOFailure(.codec, "io request '\(R.name)' could not be encoded: \(error)"))
        }
        switch await core.call(address: address, payload: payload, binary: binary, traced: trace != nil) {
        case .failure(let failure):
            return .failure(IOFailure(IOFailure.Code(rawValue: failure.code), failure.message))
        case .response(let bytes, let binary):
            do {
                return .success(try IOBody.decode(R.Response.self, from: bytes, binary: binary, what: "the response to '\(R.name)'"))
            } catch {
                return .failure(IOFailure(.codec, "\(error)"))
            }
        }
    }
}

/// What the io performers of a worker's instances share: its handlers, the io the topology
/// places on other workers, the way into its core, its metrics and tracer.
final class ClusterIO: Sendable {
    let local: IOHandlers
    let remoteNames: Set<String>
    let core: CoreInlet
    /// Where calls are counted and timed, when metrics are on.
    let metrics: WorkerMetrics?
    /// The process's tracer; `nil` when none was bootstrapped (``WireTracing``).
    let tracing: WireTracing?

    init(local: IOHandlers, remoteNames: Set<String>, core: CoreInlet, metrics: WorkerMetrics?, tracing: WireTracing?) {
        self.local = local
        self.remoteNames = remoteNames
        self.core = core
        self.metrics = metrics
        self.tracing = tracing
    }
}

/// The request and response bytes of an io call: the binary codec between Swift workers, JSON
/// for a value the binary codec refuses; a response comes in its request's codec (JSON to a
/// peer that sent JSON). The header's binary flag says which. Each is encoded once and decoded
/// once.
enum IOBody {
    /// Appends `value`'s bytes to `payload`: in the binary codec when `binary` allows it and
    /// the codec takes the value, else as JSON.
    /// - Returns: Whether they are in the binary codec.
    static func encode(_ value: some Encodable, binary: Bool = true, into payload: inout [UInt8]) throws -> Bool {
        guard binary else {
            payload += try WireJSON.encode(value)
            return false
        }
        let start = payload.count
        do {
            try BinaryCodec.encode(value, into: &payload)
            return true
        } catch {
            payload.removeSubrange(start...)
            payload += try WireJSON.encode(value)
            return false
        }
    }

    static func decode<T: Decodable>(_ type: T.Type, from bytes: ArraySlice<UInt8>, binary: Bool, what: String) throws -> T {
        guard binary else { return try WireJSON.decode(T.self, from: Array(bytes), code: .malformedJSON, what: what) }
        do {
            return try BinaryCodec.decode(T.self, from: bytes)
        } catch {
            throw WireError(.malformedFrame, "\(what) could not be decoded as \(T.self) from the binary codec: \(error)")
        }
    }
}
