package import GroveWire
package import Logging
import Synchronization
package import Tracing

/// How one process of Grove turns the trace context a message carries (``TraceParent``) into
/// the parent of its own span, and its span back into a `traceparent` for the next hop, through
/// the tracer the process bootstrapped (swift-distributed-tracing's `InstrumentationSystem`).
///
/// A process holds one only when a tracer was bootstrapped (``bootstrapped(log:)``, read once
/// when the coordinator, a worker or a client is made); without one, every place that would
/// trace is a test of a `nil` constant, and the trace context messages carry passes through
/// untouched: nothing is parsed, extracted or allocated for it.
package struct WireTracing: Sendable {
    package let tracer: any Tracer
    private let log: Logger
    /// Whether a malformed traceparent was logged already: once per process is enough to say
    /// a peer sends them; each one is ignored (the message goes on untraced), never refused.
    private let warned: Warned

    private final class Warned: Sendable {
        let done = Atomic(false)
    }

    package init(tracer: any Tracer, log: Logger) {
        self.tracer = tracer
        self.log = log
        warned = Warned()
    }

    /// The process's bootstrapped tracer, or `nil` when there is none (the default no-op one).
    package static func bootstrapped(log: Logger) -> WireTracing? {
        let tracer = InstrumentationSystem.tracer
        guard !(tracer is NoOpTracer) else { return nil }
        return WireTracing(tracer: tracer, log: log)
    }

    /// The context a message's `traceparent` names, to start a span under; `nil` when the value
    /// is malformed (logged once per process, with what is wrong and where it came from).
    /// - Parameters:
    ///   - trace: The traceparent's bytes, as the message carried them.
    ///   - kind: The message's kind, for the log.
    ///   - address: The message's address, for the log.
    package func context(from trace: some Collection<UInt8>, kind: MessageKind, address: String) -> ServiceContext? {
        if let problem = TraceParent.problem(with: trace) {
            if !warned.done.exchange(true, ordering: .relaxed) {
                log.warning("ignored a malformed traceparent: \(problem); the message was handled untraced (logged once per process; docs/PROTOCOL.md, 'Trace context')",
                    metadata: ["kind": "\(kind.name)", "address": "\(address)", "bytes": "\(trace.count)"])
            }
            return nil
        }
        var context = ServiceContext.topLevel
        tracer.extract(["traceparent": String(decoding: trace, as: UTF8.self)], into: &context, using: TraceparentCarrier())
        return context
    }

    /// The `traceparent` of `context` (a span's), as the tracer's propagator writes it; `nil`
    /// when the tracer writes none (one that does not speak W3C trace context).
    package func traceparent(of context: ServiceContext) -> [UInt8]? {
        var carrier: [String: String] = [:]
        tracer.inject(context, into: &carrier, using: TraceparentCarrier())
        guard let value = carrier["traceparent"], value.utf8.count <= TraceParent.maximumLength else { return nil }
        return Array(value.utf8)
    }
}

/// The trace context's carrier in memory: header names to values, as the tracer's propagator
/// reads and writes them.
struct TraceparentCarrier: Extractor, Injector {
    func extract(key: String, from carrier: [String: String]) -> String? { carrier[key] }
    func inject(_ value: String, forKey key: String, into carrier: inout [String: String]) { carrier[key] = value }
}
