import GroveCluster
import GroveRuntime
@_spi(GroveInternal) import GroveWire
import Tracing

// The worker's spans, made only when the process bootstrapped a tracer (`tracing` is not nil)
// and the message carries a trace context: an event's `transition <machine>`, under the
// coordinator's route span, and a served io request's `io <request>`, under the span of the
// machine's worker that sent it (`io-request <request>`, `RemoteIO.swift`).

extension WorkerRuntime {
    /// An event that carries a trace context: delivered inside a span, and with the span's
    /// context bound as `ServiceContext.current`, so the effects its transition starts (tasks,
    /// which inherit it) make their io calls under it.
    func deliver(_ payload: ArraySlice<UInt8>, flags: Header.Flags, correlation: UInt64, address: String,
                 trace: ArraySlice<UInt8>, tracing: WireTracing) {
        guard let parent = tracing.context(from: trace, kind: .event, address: address) else {
            return deliver(payload, flags: flags, correlation: correlation, address: address)
        }
        let span = tracing.tracer.startSpan("transition \(MachineAddress.machine(of: address))", context: parent, ofKind: .server)
        span.attributes["grove.address"] = address
        span.attributes["grove.worker"] = link.worker
        ServiceContext.withValue(span.context) {
            deliver(payload, flags: flags, correlation: correlation, address: address)
        }
        span.end()
    }

    /// ``run(_:binary:with:on:)`` inside a span under `parent`, the request's context.
    /// - Returns: The result, and the span's `traceparent` for the result to carry back.
    static func run(_ payload: ArraySlice<UInt8>, binary: Bool, with io: IOHandlers, on worker: String, address: String,
                    parent: ServiceContext, tracing: WireTracing) async -> (result: (payload: [UInt8], binary: Bool), trace: [UInt8]?) {
        let name = (try? IOCallHead(reading: Array(payload)))?.name ?? "unknown"
        let span = tracing.tracer.startSpan("io \(name)", context: parent, ofKind: .server)
        span.attributes["grove.address"] = address
        span.attributes["grove.worker"] = worker
        let result = await ServiceContext.withValue(span.context) {
            await run(payload, binary: binary, with: io, on: worker)
        }
        if let failure = try? IOCallResult.failure(in: result.payload) {
            span.setStatus(SpanStatus(code: .error, message: failure.code))
        }
        span.end()
        return (result, tracing.traceparent(of: span.context))
    }
}
