import GroveCluster
@_spi(GroveInternal) import GroveWire
import Tracing
import ZeroMQ

/// The coordinator's span: a client's request that carries a trace context is routed under a
/// span of its own (`route <kind>`), a child of the client's, and reaches the worker with that
/// span's `traceparent` in place of the client's, so the worker's span is the route's child.
/// Only with a tracer bootstrapped; without one, the client's trace context passes through as
/// it came (``MessageView/append(to:correlation:trace:sender:)``). io requests and results pass
/// through as they came either way: the worker spans on both ends name their parents.
extension CoordinatorDriver {
    func forward(_ request: MessageView, traced trace: UnsafeRawBufferPointer, to worker: Int, id: UInt64,
                 sender: [UInt8]? = nil, tracing: WireTracing, io: LoopIO) {
        let address = (try? request.address()) ?? ""
        guard let parent = tracing.context(from: trace.assumingMemoryBound(to: UInt8.self), kind: request.kind, address: address) else {
            // Malformed: logged once by `context`, and dropped here rather than passed on.
            toWorker(worker, io: io) { request.append(to: &$0, correlation: id, trace: [], sender: sender) }
            return
        }
        let span = tracing.tracer.startSpan("route \(request.kind.name)", context: parent, ofKind: .server)
        span.attributes["grove.address"] = address
        span.attributes["grove.worker"] = core.workerNames[worker]
        span.attributes["grove.process"] = "coordinator"
        let own = tracing.traceparent(of: span.context)
        toWorker(worker, io: io) { request.append(to: &$0, correlation: id, trace: own ?? [], sender: sender) }
        span.end()
    }
}
